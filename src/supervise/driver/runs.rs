//! Driving registered runs: claim them in the registry, read their task directories,
//! capture their panes in one tmux call, decide with [`crate::supervise::tick`], type the
//! answer and carry out the effects (see [`super`]), and save each run under its claim.
//!
//! [`tick_session`] is the per-run decision a notification-driven driver (`run watch`) calls
//! for one run; [`tick_runs`] is the same over a selection, batched; [`recover_runs`] is
//! `run recover`.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::path::Path;

use anyhow::{Context, Result, anyhow};

use super::isolation::{self, isolated};
use super::{World, owner, perform, type_answer};
use crate::hook::session::{Key, Record, Transition};
use crate::hook::store::Store;
use crate::protocol::document;
use crate::protocol::signal;
use crate::protocol::stop::{self, StopState};
use crate::routing;
use crate::supervise::inputs;
use crate::supervise::run::{DispatchInto, DispatchStep, Mode, Run};
use crate::supervise::store::{AccountView, Claim, Registry, Selection, Written};
use crate::supervise::stream;
use crate::supervise::tick::notice as notices;
use crate::supervise::tick::notice::{EventKind, Notice};
use crate::supervise::tick::{
    self, Did, Observation, Outcome, PaneObs, SignalObs, StepFiles, StopObs, TickEvent,
    TickOptions, WaitInputs,
};
use crate::supervise::wait::Recorded;
use crate::time::Time;
use crate::tmux::{CaptureOptions, Snapshot, TmuxError};

/// One decision for one run: the library entry point of `run watch`-style drivers. `None`
/// when the registry has no such run.
pub fn tick_session(
    registry: &mut dyn Registry,
    world: &World<'_>,
    session: &str,
    options: &TickOptions,
    now: Time,
) -> Result<Option<TickEvent>> {
    Ok(
        tick_runs(registry, world, Selection::Session(session), options, now)?
            .into_iter()
            .next(),
    )
}

/// One heartbeat for every selected run, in session order.
pub fn tick_runs(
    registry: &mut dyn Registry,
    world: &World<'_>,
    selection: Selection<'_>,
    options: &TickOptions,
    now: Time,
) -> Result<Vec<TickEvent>> {
    for_each_claimed(
        registry,
        world,
        selection,
        options,
        now,
        "tick",
        tick::decide,
    )
}

/// `run recover` for every running run: seed 000's server recovery.
pub fn recover_runs(
    registry: &mut dyn Registry,
    world: &World<'_>,
    options: &TickOptions,
    now: Time,
) -> Result<Vec<TickEvent>> {
    for_each_claimed(
        registry,
        world,
        Selection::All,
        options,
        now,
        "recover",
        tick::recover,
    )
}

/// The pure decision for one claimed run ([`tick::decide`] or [`tick::recover`]).
type Decide = fn(&Run, &Observation, Time, &TickOptions) -> Outcome;

/// Claim the selected runs, capture their panes in one tmux call, and decide and act for
/// each; runs another driver holds are reported as skipped. Events come in session order.
///
/// Runs are isolated from each other: one run's error — or a bug, a panic while reading its
/// screen or deciding — is that run's `error` event, and the others are still ticked. Every
/// claim this call took is given back on every way out ([`Held`]): saved with the run's new
/// state, released after an error or a panic, released when the process is asked to stop
/// ([`isolation::interrupted`]) before the run's turn, released if this function itself unwinds.
fn for_each_claimed(
    registry: &mut dyn Registry,
    world: &World<'_>,
    selection: Selection<'_>,
    options: &TickOptions,
    now: Time,
    what: &str,
    decide: Decide,
) -> Result<Vec<TickEvent>> {
    let owner = owner(what);
    let (claimed, mut events) = claim_runs(registry, world, selection, options, now, &owner)?;
    let mut held = Held {
        registry,
        owner: &owner,
        sessions: claimed.iter().map(|run| run.spec.session.clone()).collect(),
    };
    let snapshots = isolated(|| snapshots(world, &claimed)).unwrap_or_else(|why| {
        let why = format!("cannot capture the panes: {why}");
        claimed.iter().map(|_| Err(anyhow!("{why}"))).collect()
    });
    // The governor's view of each account, read once and kept current across the runs of
    // this batch (the registry decides again on its own state when a permit is stored).
    let mut accounts: BTreeMap<String, AccountView> = BTreeMap::new();
    let batch = Batch {
        world,
        options,
        now,
        owner: &owner,
        decide,
    };
    for (run, snapshot) in claimed.into_iter().zip(snapshots) {
        if isolation::interrupted() {
            events.push(TickEvent::skipped(
                &run,
                now,
                options.dry_run,
                "interrupted before this run's turn; its claim is released".to_string(),
            ));
            continue;
        }
        events.push(batch.tick(&mut held, &mut accounts, &run, snapshot));
    }
    drop(held);
    if !options.dry_run {
        events.extend(announce_lost_hosts(registry, world, options, now)?);
    }
    events.sort_by(|a, b| a.session.cmp(&b.session));
    Ok(events)
}

/// Renew this host's lease (it is alive) and claim the selected runs: the runs claimed, and
/// a skipped event for each run another driver holds.
fn claim_runs(
    registry: &mut dyn Registry,
    world: &World<'_>,
    selection: Selection<'_>,
    options: &TickOptions,
    now: Time,
    owner: &str,
) -> Result<(Vec<Run>, Vec<TickEvent>)> {
    if !options.dry_run {
        registry.host_alive(&world.host, options.host_lease, now)?;
    }
    let claims = registry.claim(selection, owner, &world.host, now)?;
    let mut events = Vec::with_capacity(claims.len());
    let mut claimed = Vec::new();
    for claim in claims {
        match claim {
            Claim::Claimed(run) => claimed.push(*run),
            Claim::Skipped(run, why) => events.push(TickEvent::skipped(
                &run,
                now,
                options.dry_run,
                why.to_string(),
            )),
        }
    }
    Ok((claimed, events))
}

/// What the runs one driver call claimed share: the world, the options, the clock, the
/// claim's owner and the decision.
struct Batch<'a, 'w> {
    world: &'a World<'w>,
    options: &'a TickOptions,
    now: Time,
    owner: &'a str,
    decide: Decide,
}

impl Batch<'_, '_> {
    /// One claimed run's turn, isolated: its account's view (read once per batch), then
    /// observe, decide and act ([`drive`]). Its claim is saved with the new state, or
    /// released after an error or a panic (the row untouched: the next tick retries at once).
    fn tick(
        &self,
        held: &mut Held<'_, '_>,
        accounts: &mut BTreeMap<String, AccountView>,
        run: &Run,
        snapshot: Result<Snapshot>,
    ) -> TickEvent {
        let (now, dry_run) = (self.now, self.options.dry_run);
        let account = match accounts.entry(run.spec.account.clone()) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => match held.registry.account(&run.spec.account) {
                Ok(view) => entry.insert(view),
                Err(err) => {
                    held.release(&run.spec.session);
                    return TickEvent::failed(
                        run,
                        now,
                        dry_run,
                        format!("cannot read the account: {err:#}"),
                    );
                }
            },
        };
        let result = isolated(|| {
            let pane = pane_obs(self.world, run, snapshot, now);
            drive(
                &mut *held.registry,
                self.world,
                run,
                pane,
                self.options,
                now,
                self.owner,
                self.decide,
                Some(account),
            )
            .map_err(|err| format!("{err:#}"))
        });
        match result.unwrap_or_else(|bug| Err(bug.to_string())) {
            Ok(event) => {
                held.done(&run.spec.session);
                event
            }
            Err(why) => {
                held.release(&run.spec.session);
                TickEvent::failed(run, now, dry_run, why)
            }
        }
    }
}

/// The claims one driver call holds and has not given back yet; dropping it releases them
/// (a claim already saved or taken over is not ours to release, and release says so by
/// changing nothing).
struct Held<'r, 'o> {
    registry: &'r mut dyn Registry,
    owner: &'o str,
    sessions: Vec<String>,
}

impl Held<'_, '_> {
    /// The run's claim was given back by its save.
    fn done(&mut self, session: &str) {
        self.sessions.retain(|held| held != session);
    }

    fn release(&mut self, session: &str) {
        self.done(session);
        let owner = self.owner;
        let registry = &mut *self.registry;
        let _ = isolated(|| {
            registry
                .release(session, owner)
                .map_err(|e| format!("{e:#}"))
        });
    }
}

impl Drop for Held<'_, '_> {
    fn drop(&mut self) {
        for session in std::mem::take(&mut self.sessions) {
            self.release(&session);
        }
    }
}

/// Hosts whose lease ran out: announced once, by whichever host notices first, on the
/// event of the lost host's first running run (its runs are never ticked from here).
///
/// Through that run's outbox: the notice is stored there first, under an id of the host and
/// its lapsed lease ([`notices::once_id`]), and only then is the loss marked announced. A tick
/// killed in between leaves the loss unannounced, and the next one stores the same entry again
/// (kept once); a tick killed after leaves the entry for the next tick past its delivery lease.
/// The tick that marks it announced delivers it now.
fn announce_lost_hosts(
    registry: &mut dyn Registry,
    world: &World<'_>,
    options: &TickOptions,
    now: Time,
) -> Result<Vec<TickEvent>> {
    let lost: Vec<_> = registry
        .hosts()?
        .into_iter()
        .filter(|h| h.lost(now) && h.lost_announced_at.is_none() && h.name != world.host)
        .collect();
    if lost.is_empty() {
        return Ok(Vec::new());
    }
    let runs = registry.list()?;
    let mut events = Vec::new();
    for host in &lost {
        let mine: Vec<&Run> = runs
            .iter()
            .filter(|r| r.status.is_active() && r.spec.host == host.name)
            .collect();
        let Some(first) = mine.first() else {
            continue;
        };
        let sessions: Vec<&str> = mine.iter().map(|r| r.spec.session.as_str()).collect();
        let why = format!(
            "host {:?} is lost: its ticks and watcher stopped renewing its lease at {} (last seen {}); its runs {} are not ticked or typed into from elsewhere",
            host.name,
            crate::time::format_time(host.lease_until),
            crate::time::format_time(host.seen_at),
            sessions.join(", ")
        );
        let mut event = TickEvent::skipped(first, now, options.dry_run, why.clone());
        let notice = Notice {
            event: EventKind::HostLost,
            reason: why,
            key: None,
            id: Some(notices::once_id(
                EventKind::HostLost,
                &[&host.name, &crate::time::format_time(host.lease_until)],
            )),
        };
        registry.post(&first.spec.session, &[notices::entry(&event, &notice, now)])?;
        event.notify.push(notice);
        events.push((host.name.clone(), event));
    }
    // Only what this tick marked announced is its to deliver now; a loss another host
    // marked first is that host's (the entry it stored is this one, by id).
    let announced = registry.announce_lost_hosts(now)?;
    Ok(events
        .into_iter()
        .filter(|(name, _)| announced.iter().any(|h| h.name == *name))
        .map(|(_, event)| event)
        .collect())
}

/// What a step leaves to the next.
#[derive(PartialEq)]
enum Flow {
    Next,
    /// The tick is over (its event is the outcome's).
    Done,
}

/// Observe → decide → answer → effects → save, for one claimed run.
#[allow(clippy::too_many_arguments)]
fn drive(
    registry: &mut dyn Registry,
    world: &World<'_>,
    run: &Run,
    pane: PaneObs,
    options: &TickOptions,
    now: Time,
    owner: &str,
    decide: Decide,
    account: Option<&mut AccountView>,
) -> Result<TickEvent> {
    if crate::failpoint::armed_for("tick-panic", &run.spec.session) {
        panic!("failpoint tick-panic={}", run.spec.session);
    }
    if crate::failpoint::armed_for("tick-sigterm", &run.spec.session) {
        let _ = signal_hook::low_level::raise(signal_hook::consts::SIGTERM);
    }
    let mut obs = observe(world, run, pane, now)?;
    obs.account = account.as_deref().cloned();
    let outcome = decide(run, &obs, now, options);
    if options.dry_run {
        let planned = outcome.planned();
        let mut event = outcome.event;
        event.did = planned;
        registry.release(&run.spec.session, owner)?;
        return Ok(event);
    }
    let plan = outcome.plan();
    let mut d = Driving {
        registry,
        world,
        run,
        obs: &obs,
        owner,
        now,
        outcome,
        did: Vec::new(),
        typed_answer: false,
        granted: None,
        dispatching: false,
        account,
    };
    // The pure core's plan, in order, then the row saved (tick::Outcome::plan).
    for effect in plan {
        let flow = match effect {
            tick::Effect::RecordResume => d.record_resume()?,
            tick::Effect::TypeAnswer => d.type_answer()?,
            tick::Effect::RecordDispatch => d.record_dispatch()?,
            tick::Effect::MarkCompaction { requested } => d.mark_compaction(requested),
            tick::Effect::LogApproval => d.log_approval(),
            world => d.perform(world)?,
        };
        if flow == Flow::Done {
            return Ok(d.outcome.event);
        }
    }
    d.save()?;
    Ok(d.outcome.event)
}

/// One claimed run's outcome being carried out ([`drive`]).
struct Driving<'d, 'w> {
    registry: &'d mut dyn Registry,
    world: &'d World<'w>,
    run: &'d Run,
    obs: &'d Observation,
    owner: &'d str,
    now: Time,
    outcome: Outcome,
    did: Vec<Did>,
    typed_answer: bool,
    /// The permit the registry granted with a dispatch or resume record, if any.
    granted: Option<crate::supervise::store::PermitAsk>,
    dispatching: bool,
    /// The account's view `run watch` keeps across ticks, folded once the row is saved.
    account: Option<&'d mut AccountView>,
}

impl Driving<'_, '_> {
    fn record_resume(&mut self) -> Result<Flow> {
        let Some(intent) = self.outcome.intent() else {
            return Ok(Flow::Next);
        };
        let permit = self.outcome.permit.as_ref();
        match self
            .registry
            .record(&intent, self.owner, permit, self.now)?
        {
            Written::Stored => self.granted = self.outcome.permit.clone(),
            Written::NotHeld => self
                .outcome
                .not_answered("the run was stopped or taken over before the resume"),
            Written::Refused(why) => self
                .outcome
                .not_answered(&format!("the quota governor holds the resume: {why}")),
        }
        Ok(Flow::Next)
    }

    fn type_answer(&mut self) -> Result<Flow> {
        let Some(answer) = self.outcome.answer.clone() else {
            return Ok(Flow::Next);
        };
        match type_answer(self.world, &answer, Some(self.run.task_path()))? {
            None => {
                self.outcome.answered();
                self.typed_answer = true;
                mark_permission_answered(
                    self.world,
                    self.obs,
                    &answer,
                    self.now,
                    &mut self.outcome.event,
                );
                self.did.push(done(tick::answer_effect(&answer), Ok(())));
            }
            Some(why) => self.outcome.not_answered(&why),
        }
        Ok(Flow::Next)
    }

    fn record_dispatch(&mut self) -> Result<Flow> {
        let Some(intent) = self.outcome.dispatch_intent() else {
            return Ok(Flow::Next);
        };
        if self.outcome.permit.is_some() {
            // The readings this tick took first: the permit is decided again on the stored
            // account, which must know them as the tick's decision did (else a reading that
            // releases a paced run was refused on the stale one, and, the refused tick
            // storing nothing, refused again at every tick until the reset). A reading is a
            // fact whatever this tick goes on to store, and folding it twice changes nothing.
            let reads: Vec<crate::supervise::governor::Event> = self
                .outcome
                .account_events
                .iter()
                .filter(|e| matches!(e, crate::supervise::governor::Event::Read(..)))
                .cloned()
                .collect();
            if !reads.is_empty() {
                self.registry
                    .note_account(&self.run.spec.account, &reads, self.now)?;
            }
        }
        let permit = self.outcome.permit.as_ref();
        let (why, refused) = match self.registry.record(intent, self.owner, permit, self.now)? {
            Written::Stored => (None, false),
            Written::NotHeld => (
                Some("the run was stopped or taken over before the dispatch".to_string()),
                false,
            ),
            Written::Refused(why) => (
                Some(format!("the quota governor holds the step: {why}")),
                true,
            ),
        };
        let Some(why) = why else {
            self.granted = self.outcome.permit.clone();
            self.dispatching = true;
            crate::failpoint::hit("dispatch-recorded");
            return Ok(Flow::Next);
        };
        // Nothing was stored: the claim goes back and the next tick decides again.
        self.registry.release(&self.run.spec.session, self.owner)?;
        let event = &mut self.outcome.event;
        event.notify.clear();
        if refused {
            // Another run took the permit first (another host, or a tick beside this
            // one): the step waits, nothing was typed.
            event.decision = crate::supervise::tick::Decision::Wait;
        }
        event.reasons.push(format!("nothing typed: {why}"));
        Ok(Flow::Done)
    }

    /// A `/compact` is marked once typed; the marker is dropped once the context is back
    /// under the threshold.
    fn mark_compaction(&mut self, requested: bool) -> Flow {
        if !requested || self.typed_answer {
            mark_compaction(
                self.world,
                self.obs,
                requested,
                self.now,
                &mut self.outcome.event,
            );
        }
        Flow::Next
    }

    fn perform(&mut self, effect: tick::Effect) -> Result<Flow> {
        let next = &mut self.outcome.run;
        // A slash command typed into the agent gets its Enter after a pause; a shell takes
        // both in one read.
        let pause = if next.spec.mode == Mode::Dispatch && next.spec.into == DispatchInto::Agent {
            crate::supervise::typing::PROMPT_SUBMIT_DELAY
        } else {
            std::time::Duration::ZERO
        };
        let result = perform(
            self.world,
            &next.spec.target,
            next.task_path(),
            &effect,
            pause,
            self.now,
        );
        let send = matches!(effect, tick::Effect::Send { .. });
        if let (true, Err(err)) = (send, &result) {
            // Keys that did not reach the pane: keep the old row (or the dispatch's intent
            // record, which the next tick types again) so the next tick tries again.
            return Err(anyhow!(
                "cannot type into {}: {err:#}",
                self.run.spec.target
            ));
        }
        if self.dispatching && send {
            // A retype counts only now that its keys are all in (see tick::Retype).
            if let Some(retype) = self.outcome.retype.take() {
                retype.typed(next);
                self.outcome.event.run = tick::RunAfter::of(next, self.now);
            }
            crate::failpoint::hit("dispatch-typed");
            // A shell runs what it was given. An agent may still hold the text in its input
            // box (an Enter its command menu took): the next tick confirms by the screen.
            if next.spec.into == DispatchInto::Shell {
                next.dispatch.typing = None;
            }
        }
        self.did.push(done(effect, result));
        Ok(Flow::Next)
    }

    /// An answer typed, or an escalation (reported once per screen).
    fn log_approval(&mut self) -> Flow {
        let escalated = self.outcome.event.decision == tick::Decision::Escalate;
        if (self.typed_answer || escalated)
            && let PaneObs::Seen(view) = &self.obs.pane
        {
            super::log_approval(
                self.world,
                &self.run.spec.session,
                view,
                self.typed_answer,
                self.now,
            );
        }
        Flow::Next
    }

    fn save(&mut self) -> Result<Flow> {
        let (now, owner) = (self.now, self.owner);
        let next = &mut self.outcome.run;
        let event = &mut self.outcome.event;
        event.did = std::mem::take(&mut self.did);
        // The weekly reserve is stored with this decision too, under the account's and the
        // reset's id: kept below only if the account says this run's tick told first.
        let weekly_notice = self.outcome.weekly_notice.take();
        let weekly_id = weekly_notice.as_ref().and_then(|n| n.id.clone());
        event.notify.extend(weekly_notice);
        // What it announces is stored with the decision, in the same write, before any of it
        // is delivered: a tick killed from here on leaves it in the outbox for the next tick.
        notices::add(&mut next.outbox, event, next.started_at, now);
        if !self.registry.save(next, owner)? {
            // Not this tick's to announce: what it decided was not kept.
            event.notify.clear();
            event.reasons.push(
                "the run was stopped or taken over during this tick; this tick's state was not saved"
                    .to_string(),
            );
            return Ok(Flow::Done);
        }
        // The account: this session's readings, a step ended, a release; the weekly reserve
        // is announced by the first run of the account to tell, once. Another run told
        // first: this run's copy is settled undelivered (killed before that, it is delivered
        // again under the same id, for the receiver to dedupe).
        let account_events = &self.outcome.account_events;
        let first_weekly = self
            .registry
            .note_account(&next.spec.account, account_events, now)?;
        if let Some(id) = weekly_id.filter(|_| !first_weekly) {
            event.notify.retain(|n| n.id.as_ref() != Some(&id));
            self.registry.settle(&next.spec.session, &[id], now)?;
        }
        if let Some(view) = self.account.as_deref_mut() {
            super::super::tick::pace::fold(
                view,
                self.run,
                next,
                self.granted.as_ref(),
                account_events,
                now,
            );
        }
        Ok(Flow::Done)
    }
}

fn done(effect: tick::Effect, result: Result<()>) -> Did {
    match result {
        Ok(()) => Did {
            effect,
            outcome: "done",
            error: None,
        },
        Err(err) => Did {
            effect,
            outcome: "failed",
            error: Some(crate::output::one_line(&format!("{err:#}"))),
        },
    }
}

/// Capture every run's pane in one tmux call (tmux.rs splits it into calls that fit tmux's
/// command limit); one result per run.
fn snapshots(world: &World<'_>, runs: &[Run]) -> Vec<Result<Snapshot>> {
    if runs.is_empty() {
        return Vec::new();
    }
    let targets: Vec<String> = runs.iter().map(|r| r.spec.target.clone()).collect();
    match world
        .terminal
        .snapshots(&targets, CaptureOptions::default())
    {
        Ok(snapshots) => snapshots,
        Err(err) => {
            let why = crate::output::one_line(&format!("{err:#}"));
            runs.iter().map(|_| Err(anyhow!("{why}"))).collect()
        }
    }
}

fn pane_obs(world: &World<'_>, run: &Run, snapshot: Result<Snapshot>, now: Time) -> PaneObs {
    let snap = match snapshot {
        Ok(snap) => snap,
        Err(err) => {
            let why = crate::output::one_line(&format!("{err:#}"));
            return if TmuxError::is_not_found(&err) {
                PaneObs::Gone(why)
            } else {
                PaneObs::Unavailable(why)
            };
        }
    };
    if snap.pane.dead {
        return PaneObs::Dead("its program exited and the pane is dead".to_string());
    }
    PaneObs::Seen(Box::new(world.view(&snap, run.spec.agent, now)))
}

/// Read a run's task files. Only I/O failures other than "missing" or "invalid" are errors;
/// an unreadable status file or quota-wait record is a note in the event.
/// Keep the proactive-compaction marker in the agent's hook record (a typed `/compact` is
/// not typed again until the context use is back under the threshold).
fn mark_compaction(
    world: &World<'_>,
    obs: &Observation,
    requested: bool,
    now: Time,
    event: &mut TickEvent,
) {
    let Some(key) = obs
        .channels
        .as_ref()
        .and_then(|ty| ty.hook.as_ref())
        .and_then(|hook| Key::from_label(&hook.key))
    else {
        return;
    };
    let store = Store::new(&world.state_dir);
    let mut warnings = Vec::new();
    let result = store.update(&key, &mut warnings, |previous| {
        let mut record = previous.unwrap_or_else(|| Record::fresh(&key, now));
        record.compact_requested_at = requested.then_some(now);
        Transition {
            record,
            rebind: None,
        }
    });
    if let Err(err) = result {
        event
            .reasons
            .push(format!("cannot keep the compaction marker: {err:#}"));
    }
}

/// autoctl answered the permission box the agent's hooks announced (Gemini's Notification
/// `ToolPermission`, Claude Code's `permission_prompt`): the agent goes on with that tool, and
/// no hook of the agent's says so until the tool ends (Gemini fires nothing between the box
/// and AfterTool). The hook record takes autoctl's own answer — working with the tool, event
/// `PermissionAnswered` — so the next ticks go by the typed state with the screen as the
/// witness, instead of reading the screen alone while the granted tool runs. A box still on
/// the screen after the hook grace is the hooks' disagreement (a person decides). An Esc
/// (which ends the turn) is not such an answer.
fn mark_permission_answered(
    world: &World<'_>,
    obs: &Observation,
    answer: &crate::supervise::typing::Answer,
    now: Time,
    event: &mut TickEvent,
) {
    let PaneObs::Seen(view) = &obs.pane else {
        return;
    };
    if !matches!(
        view.classification.class,
        crate::pane::Class::Permission | crate::pane::Class::YesNo
    ) || answer
        .keys
        .iter()
        .any(|k| matches!(k, crate::pane::Key::Key(name) if name.eq_ignore_ascii_case("escape")))
    {
        return;
    }
    let Some(hook) = obs.channels.as_ref().and_then(|ty| ty.hook.as_ref()) else {
        return;
    };
    if hook.state != crate::hook::session::AgentState::WaitingForPermission {
        return;
    }
    let Some(key) = Key::from_label(&hook.key) else {
        return;
    };
    let store = Store::new(&world.state_dir);
    let mut warnings = Vec::new();
    let seen = hook.seq;
    let result = store.update(&key, &mut warnings, |previous| {
        let mut record = previous.unwrap_or_else(|| Record::fresh(&key, now));
        // Only the state the answer was decided on: a hook event since then is newer.
        if record.seq == seen
            && record.state == crate::hook::session::AgentState::WaitingForPermission
        {
            record.state = crate::hook::session::AgentState::Working;
            record.since = now;
            record.at = now;
            record.tool_started_at = Some(now);
            record.event = crate::supervise::channels::PERMISSION_ANSWERED.to_string();
            record.detail = Some("autoctl".to_string());
            record.events.insert(record.event.clone(), now);
        }
        Transition {
            record,
            rebind: None,
        }
    });
    if let Err(err) = result {
        event
            .reasons
            .push(format!("cannot record the permission answer: {err:#}"));
    }
}

fn observe(world: &World<'_>, run: &Run, pane: PaneObs, now: Time) -> Result<Observation> {
    let view = match &pane {
        PaneObs::Seen(view) => Some(view.as_ref()),
        _ => None,
    };
    let channels = super::channel_state(world, view, Some(run.task_path()));
    let agent_start = crate::supervise::agent_start::observe(run, view, channels.as_ref());
    let dir = run.task_path();
    if !dir.is_dir() {
        return Ok(Observation {
            task_dir: false,
            signal: SignalObs::Missing,
            stop: StopObs::None,
            pane,
            entry: None,
            annotations: false,
            status: None,
            compaction: Default::default(),
            quota_wait: None,
            notes: Vec::new(),
            channels,
            waits: WaitInputs::default(),
            account: None,
            step_files: None,
            agent_start,
        });
    }
    let mut notes = Vec::new();
    let status = inputs::status_mark(dir).unwrap_or_else(|why| {
        notes.push(format!("{why}; no step timeout this tick"));
        None
    });
    let (compaction, note) = inputs::task_compaction(dir);
    notes.extend(note);
    let quota_wait = inputs::quota_record(dir).unwrap_or_else(|why| {
        notes.push(format!("{why}; the quota-wait record is ignored"));
        None
    });
    let waits = WaitInputs {
        recorded: quota_wait.as_ref().map(|(why, reset)| Recorded {
            reset: *reset,
            why: why.clone(),
        }),
        child_cpu: match &pane {
            PaneObs::Seen(view) if view.waiting.busy => crate::proc::child_cpu(view.pid),
            _ => None,
        },
    };
    // The event shows the record while its reset is ahead (or unknown).
    let quota_wait = quota_wait
        .filter(|record| inputs::active(record, now))
        .map(|(why, _)| why);
    let signal = read_signal(dir)?;
    let stop = match stop::check(dir)? {
        StopState::None => StopObs::None,
        StopState::Requested(request) => StopObs::Requested(request.reason),
        StopState::Unreadable { why } => StopObs::Unreadable(why),
    };
    let entry = (run.spec.mode == Mode::Dispatch
        && run.dispatch.pending.is_none()
        && run.dispatch.dispatched.is_none()
        && matches!(signal, SignalObs::Missing))
    .then(|| entry_step(run).map_err(|err| format!("{err:#}")));
    Ok(Observation {
        task_dir: true,
        signal,
        stop,
        pane,
        entry,
        annotations: run.spec.mode == Mode::Dispatch
            && crate::routing::command::has_annotations(dir),
        status,
        compaction,
        quota_wait,
        notes,
        channels,
        waits,
        account: None,
        step_files: step_files(world, run),
        agent_start,
    })
}

/// Dispatch mode `--into shell`: ready the next step's files (its stream's directory, the
/// settings with autoctl's hooks) and read how the dispatched step ended.
fn step_files(world: &World<'_>, run: &Run) -> Option<StepFiles> {
    if run.spec.mode != Mode::Dispatch || run.spec.into != DispatchInto::Shell {
        return None;
    }
    let state = &world.state_dir;
    let session = &run.spec.session;
    let count = run.dispatch.count;
    // The hooks name this binary by its absolute path: it resolves in any environment the
    // step runs in.
    let autoctl = std::env::current_exe()
        .map(|p| crate::shell::quote_if_needed(&p.to_string_lossy()))
        .unwrap_or_else(|_| "autoctl".to_string());
    for note in stream::prepare(state, session, count + 1, &autoctl) {
        crate::output::warn(&note);
    }
    Some(StepFiles {
        settings: stream::settings_path(state).display().to_string(),
        next_stream: stream::stream_path(state, session, count + 1)
            .display()
            .to_string(),
        result: (count > 0)
            .then(|| stream::read_result(state, session, count))
            .flatten(),
    })
}

/// Read `.auto-signal` with a fingerprint of this very file (see [`signal::fingerprint`]).
pub fn read_signal(dir: &Path) -> Result<SignalObs> {
    let path = signal::path_in(dir);
    let Some((bounded, fingerprint)) =
        signal::read_file(&path).with_context(|| format!("cannot read {}", path.display()))?
    else {
        return Ok(SignalObs::Missing);
    };
    let bytes = match document::bounded_bytes(bounded) {
        Ok(bytes) => bytes,
        Err(problem) => return Ok(SignalObs::Invalid(problem.to_string())),
    };
    Ok(match signal::parse(&bytes) {
        Ok(signal) => SignalObs::Valid {
            signal,
            fingerprint,
        },
        Err(problems) => SignalObs::Invalid(problems[0].to_string()),
    })
}

/// Dispatch mode's first step: where the module resumes (`autoctl next --task DIR`).
fn entry_step(run: &Run) -> Result<DispatchStep> {
    let table = routing::load(&run.spec.table).map_err(|e| anyhow!("{e:#}"))?;
    routing::resume::resume(&table, run.task_path())
        .map(|entry| DispatchStep {
            next: entry.next,
            checkpoint: entry.checkpoint,
        })
        .map_err(|e| anyhow!("{e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::rules::RuleSet;
    use crate::registry::memory::MemoryRegistry;
    use crate::supervise::run::NewRun;
    use crate::supervise::stall::Limits;
    use crate::tmux::{PaneInfo, Terminal};
    use std::cell::RefCell;
    use std::time::Duration;

    /// A terminal with one pane whose screen the test scripts: each snapshot pops the next
    /// screen (the last one stays), and every key typed is recorded.
    struct FakeTerminal {
        screens: RefCell<Vec<String>>,
        typed: RefCell<Vec<String>>,
        answered: RefCell<Option<String>>,
    }

    impl FakeTerminal {
        fn new(screens: &[&str]) -> FakeTerminal {
            FakeTerminal {
                screens: RefCell::new(screens.iter().rev().map(|s| s.to_string()).collect()),
                typed: RefCell::new(Vec::new()),
                answered: RefCell::new(None),
            }
        }
    }

    impl Terminal for FakeTerminal {
        fn snapshots(
            &self,
            targets: &[String],
            _options: CaptureOptions,
        ) -> Result<Vec<Result<Snapshot>>> {
            let mut screens = self.screens.borrow_mut();
            let text = if screens.len() > 1 {
                screens.pop().unwrap()
            } else {
                screens[0].clone()
            };
            Ok(targets
                .iter()
                .map(|_| {
                    Ok(Snapshot {
                        pane: PaneInfo {
                            id: "%7".into(),
                            address: "s:0.0".into(),
                            command: "fake-agent".into(),
                            answered: self.answered.borrow().clone(),
                            ..PaneInfo::default()
                        },
                        text: text.clone(),
                    })
                })
                .collect())
        }
        fn list_panes(&self) -> Result<Vec<PaneInfo>> {
            Ok(Vec::new())
        }
        fn send_text(&self, _target: &str, text: &str) -> Result<()> {
            self.typed.borrow_mut().push(text.to_string());
            Ok(())
        }
        fn send_keys(&self, _target: &str, keys: &[String]) -> Result<()> {
            self.typed.borrow_mut().extend(keys.iter().cloned());
            Ok(())
        }
        fn set_answered(&self, _pane_id: &str, hash: &str) -> Result<()> {
            *self.answered.borrow_mut() = Some(hash.to_string());
            Ok(())
        }
    }

    const PROMPT: &str = "Install left-pad before continuing? [y/N] ";

    fn setup() -> (tempfile::TempDir, MemoryRegistry, NewRun) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("task")).unwrap();
        let mut new = NewRun {
            session: "s".into(),
            task_dir: dir.path().join("task").to_str().unwrap().into(),
            ..sample("s")
        };
        new.agent = crate::pane::Agent::Generic;
        new.limits.threshold = 1;
        (dir, MemoryRegistry::default(), new)
    }

    fn sample(target: &str) -> NewRun {
        NewRun {
            session: target.into(),
            task_dir: "/t".into(),
            target: target.into(),
            mode: Mode::Observe,
            agent: crate::pane::Agent::Claude,
            launch_command: None,
            command_template: String::new(),
            into: crate::supervise::run::DispatchInto::Shell,
            table: "ai-cli-task".into(),
            max_iterations: 20,
            timeout: Duration::from_secs(3600),
            limits: Limits::default(),
            wait_limits: crate::supervise::wait::WaitLimits::default(),
            notify: None,
            max_compactions: 3,
            account: "default".into(),
            priority: 0,
            host: "here".into(),
        }
    }

    fn at(secs: i64) -> Time {
        chrono::DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    const OPTIONS: TickOptions = TickOptions {
        heartbeat: Duration::from_secs(60),
        dry_run: false,
        answers: true,

        channels: crate::supervise::channels::ChannelOptions::DEFAULT,
        waits: crate::supervise::wait::WaitOptions::DEFAULT,
        governor: crate::supervise::governor::Options::DEFAULT,
        host_lease: crate::supervise::store::HOST_LEASE,
    };

    #[test]
    fn an_answer_is_typed_once_and_marked_in_the_pane() {
        let terminal = FakeTerminal::new(&[PROMPT]);
        let (dir, mut registry, new) = setup();
        registry.start(&new, at(0)).unwrap();
        let world = World {
            terminal: &terminal,
            socket: Some("test"),
            rules: RuleSet::embedded(),
            approval: crate::policy::screen::Approval::builtin(),
            state_dir: dir.path().join("state"),
            host: "here".into(),
        };
        let first = tick_session(&mut registry, &world, "s", &OPTIONS, at(60))
            .unwrap()
            .unwrap();
        assert_eq!(first.decision, tick::Decision::Progress);
        let second = tick_session(&mut registry, &world, "s", &OPTIONS, at(120))
            .unwrap()
            .unwrap();
        assert_eq!(
            second.decision,
            tick::Decision::Answer,
            "{:?}",
            second.reasons
        );
        assert_eq!(*terminal.typed.borrow(), ["y", "Enter"]);
        assert!(terminal.answered.borrow().is_some());
        let stall = registry.get("s").unwrap().unwrap().stall;
        assert_eq!((stall.answers_step, stall.recoveries_total), (1, 0));
        // The same screen again: answered already (by the row and by the pane marker).
        let third = tick_session(&mut registry, &world, "s", &OPTIONS, at(180))
            .unwrap()
            .unwrap();
        assert_ne!(third.decision, tick::Decision::Answer);
        assert_eq!(terminal.typed.borrow().len(), 2, "nothing typed twice");
        assert!(registry.get("s").unwrap().unwrap().claimed_by.is_none());
    }

    #[test]
    fn a_screen_that_moves_before_the_answer_gets_no_keys_and_costs_no_recovery() {
        // The decision sees the prompt twice; the fresh capture under the lock shows progress.
        let terminal = FakeTerminal::new(&[PROMPT, PROMPT, "● exec: working…"]);
        let (dir, mut registry, new) = setup();
        registry.start(&new, at(0)).unwrap();
        let world = World {
            terminal: &terminal,
            socket: None,
            rules: RuleSet::embedded(),
            approval: crate::policy::screen::Approval::builtin(),
            state_dir: dir.path().join("state"),
            host: "here".into(),
        };
        tick_session(&mut registry, &world, "s", &OPTIONS, at(60)).unwrap();
        let event = tick_session(&mut registry, &world, "s", &OPTIONS, at(120))
            .unwrap()
            .unwrap();
        assert!(terminal.typed.borrow().is_empty());
        assert_ne!(event.decision, tick::Decision::Answer);
        assert!(
            event.reasons.iter().any(|r| r.contains("nothing typed")),
            "{:?}",
            event.reasons
        );
        let stall = registry.get("s").unwrap().unwrap().stall;
        assert_eq!((stall.answers_step, stall.recoveries_total), (0, 0));
    }

    #[test]
    fn a_run_held_by_another_tick_is_skipped_untouched() {
        let terminal = FakeTerminal::new(&[PROMPT]);
        let (dir, mut registry, new) = setup();
        registry.start(&new, at(0)).unwrap();
        registry
            .claim(Selection::All, "other", "here", at(0))
            .unwrap();
        let before = registry.get("s").unwrap();
        let world = World {
            terminal: &terminal,
            socket: None,
            rules: RuleSet::embedded(),
            approval: crate::policy::screen::Approval::builtin(),
            state_dir: dir.path().join("state"),
            host: "here".into(),
        };
        let event = tick_session(&mut registry, &world, "s", &OPTIONS, at(60))
            .unwrap()
            .unwrap();
        assert_eq!(event.decision, tick::Decision::Skip);
        assert!(event.reasons[0].contains("other"), "{:?}", event.reasons);
        assert_eq!(registry.get("s").unwrap(), before);
        // Past the lease, the run is ticked again.
        let later = at(60 + crate::supervise::store::LEASE.as_secs() as i64);
        let event = tick_session(&mut registry, &world, "s", &OPTIONS, later)
            .unwrap()
            .unwrap();
        assert_ne!(event.decision, tick::Decision::Skip);
    }
}

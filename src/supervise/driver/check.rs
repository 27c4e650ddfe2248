//! Driving `stall check`: panes named on the command line (or every pane of the server),
//! their stall and wait state in one JSON file ([`crate::supervise::stall::state_file`]). One
//! heartbeat captures every target in one tmux call, reads each screen, runs the wait core
//! ([`crate::supervise::wait`], as `run tick` does: every wait has an end and a maximum) and
//! then the stall heartbeat on what is not a wait, types the answer, continuation, resume or Esc
//! (see [`super::type_answer`]) and writes `.auto-stop` where `--apply` allows, saves the
//! state, and reports one [`CheckReport`] per target.

use std::path::{Path, PathBuf};

use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use super::{World, perform, type_answer};
use crate::output;
use crate::pane::classify::Classification;
use crate::pane::view::PaneView;
use crate::pane::{Agent, Class, Key};
use crate::protocol::signal;
use crate::supervise::channels::{self, ChannelOptions, Reading, Use};
use crate::supervise::inputs;
use crate::supervise::stall::{
    self, Condition, Diagnosis, Effects, Limits, Response, Sample, SignalMark, StallState,
    StatusMark, state_file,
};
use crate::supervise::tick::{Effect, SignalObs};
use crate::supervise::typing::Answer;
use crate::supervise::wait::{self, Act, Recorded, WaitLimits, WaitObs, WaitState};
use crate::time::Time;
use crate::tmux::CaptureOptions;

/// Which panes, and how.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The panes to check; `None`: every pane of the server.
    pub targets: Option<Vec<String>>,
    /// Where the state is kept (`None`: `$AUTOCTL_STATE_DIR/stall/SOCKET.json`).
    pub state: Option<PathBuf>,
    pub limits: Limits,
    /// Carry the diagnosis out: type the answer, write `.auto-stop` past the limits.
    pub apply: bool,
    /// The task module the (one) pane works on.
    pub task: Option<PathBuf>,
    pub agent: Agent,
    /// What a step timeout types into an idle agent.
    pub continue_text: String,
    /// How the agent's hook state is used (`--hook-fresh`).
    pub channels: ChannelOptions,
    /// How waits end (the `run start` wait flags).
    pub wait_limits: WaitLimits,
}

/// The recovery counts of a target.
#[derive(Debug, Serialize)]
pub struct Recoveries {
    pub iteration: u32,
    pub total: u32,
    pub max_per_iteration: u32,
    pub max_total: u32,
}

/// Harmless prompts answered: this step (a new signal starts one), in all, allowed per step.
#[derive(Debug, Serialize)]
pub struct Answers {
    pub step: u32,
    pub total: u32,
    pub max_per_step: u32,
}

/// One line of `stall check` output.
#[derive(Debug, Serialize)]
pub struct CheckReport {
    pub target: String,
    pub pane: String,
    pub foreground: String,
    pub verdict: Condition,
    pub class: Class,
    pub action: CheckAction,
    pub applied: bool,
    pub destructive: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<Key>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    pub reason: String,
    pub hash: String,
    pub unchanged: u32,
    pub threshold: u32,
    pub recoveries: Recoveries,
    /// Harmless prompts answered (not recoveries).
    pub answers: Answers,
    /// The paused timeout clock, printed under the seed's names (`quota_wait_since`).
    #[serde(rename = "quota_wait_since", with = "crate::time::stamp::option")]
    pub clock_paused_since: Option<Time>,
    #[serde(rename = "quota_waited_seconds")]
    pub clock_paused_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<String>,
    /// How many times in a row the agent said its latest message (Claude Code screens).
    pub message_repeats: u32,
    /// `.status.json`'s `updated_at` as seen (with --task), and how long the step has gone
    /// without an update (quota waits excluded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_updated_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_elapsed_seconds: Option<u64>,
    /// The agent's state this heartbeat went by and its source (`hook`, `statusline`,
    /// `screen`), with a disagreement between hooks and screen named (the safer reading won).
    pub state: Reading,
    /// The wait the pane is in (the wait core's open wait), with its maximum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<WaitReport>,
}

/// What a line says was (or, without `--apply`, would be) done: the stall core's
/// [`Response`], or the wait core's resume or Esc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckAction {
    None,
    Wait,
    Answer,
    Escalate,
    Restart,
    Continue,
    Stop,
    /// Type the resume text and Enter: a wait ended (a reset passed, a backoff ran out).
    Resume,
    /// Type one Esc: a stream stopped moving (a stall recovery).
    Esc,
}

impl From<Response> for CheckAction {
    fn from(response: Response) -> CheckAction {
        match response {
            Response::None => CheckAction::None,
            Response::Wait => CheckAction::Wait,
            Response::Answer => CheckAction::Answer,
            Response::Escalate => CheckAction::Escalate,
            Response::Restart => CheckAction::Restart,
            Response::Continue => CheckAction::Continue,
            Response::Stop => CheckAction::Stop,
        }
    }
}

/// The open wait of a target.
#[derive(Debug, Serialize)]
pub struct WaitReport {
    pub kind: wait::WaitKind,
    #[serde(with = "crate::time::stamp")]
    pub since: Time,
    /// When the wait ends at the latest: past it a person is asked.
    #[serde(with = "crate::time::stamp")]
    pub max_at: Time,
}

/// What one heartbeat over the targets did.
pub struct Checked {
    /// One report per target that could be checked, in order.
    pub reports: Vec<CheckReport>,
    /// A target could not be checked or its diagnosis not carried out (each said on stderr).
    pub failed: bool,
    /// Saving the state, done before anything is printed: a reader that goes away early
    /// (`| head -0`) must not cost the counters this heartbeat advanced.
    pub saved: Result<()>,
}

/// One stall heartbeat over the targets: read what the task says once, capture every target
/// in one tmux call, check each (`check_target`) and save the state before anything is
/// printed.
pub fn check_targets(world: &World<'_>, options: &CheckOptions, now: Time) -> Result<Checked> {
    let beat = Heartbeat::read(options)?;
    let targets: Vec<String> = match &options.targets {
        Some(targets) => targets.clone(),
        None => world
            .terminal
            .list_panes()?
            .into_iter()
            .map(|p| p.id)
            .collect(),
    };
    let state_path = match &options.state {
        Some(path) => path.clone(),
        None => default_state_path(world.socket)?,
    };
    let mut state = state_file::open(&state_path)?;
    let snapshots = world
        .terminal
        .snapshots(&targets, CaptureOptions::default())?;
    let mut reports = Vec::with_capacity(targets.len());
    let mut failed = false;
    for (target, snap) in targets.iter().zip(snapshots) {
        let snap = match snap {
            Ok(snap) => snap,
            Err(err) => {
                output::error_line(&format!("{target}: {err:#}"));
                failed = true;
                continue;
            }
        };
        let checked = check_target(world, options, &beat, target, &snap, &mut state.doc, now);
        failed |= checked.failed;
        reports.extend(checked.report);
    }
    let saved = state.save();
    Ok(Checked {
        reports,
        failed,
        saved,
    })
}

/// What one heartbeat reads once for every target: the task's signal, status and quota-wait
/// record, the step the resume budget counts, what `--apply` allows, the continuation.
struct Heartbeat<'a> {
    task: Option<&'a Path>,
    signal: Option<SignalMark>,
    status: Option<StatusMark>,
    recorded: Option<Recorded>,
    /// The resume budget is per step: the task's latest signal.
    step: String,
    effects: Effects,
    continuation: [Key; 2],
}

impl<'a> Heartbeat<'a> {
    fn read(options: &'a CheckOptions) -> Result<Heartbeat<'a>> {
        let task = options.task.as_deref();
        let signal = task.map(signal_mark).transpose()?.flatten();
        let (status, recorded) = match task {
            Some(task) => task_inputs(task),
            None => (None, None),
        };
        let step = signal.as_ref().map_or(String::new(), |s| {
            format!("{}#{}", s.iteration.unwrap_or_default(), s.timestamp)
        });
        Ok(Heartbeat {
            task,
            signal,
            status,
            recorded,
            step,
            effects: Effects {
                answer: options.apply,
                restart: false,
                stop: options.apply && task.is_some(),
            },
            continuation: [
                Key::Text(options.continue_text.clone()),
                Key::Key("Enter".to_string()),
            ],
        })
    }
}

/// One target checked: its report (none when carrying its diagnosis out failed: the state
/// then keeps its old counters, so the next heartbeat asks again) and whether anything failed.
struct TargetChecked {
    report: Option<CheckReport>,
    failed: bool,
}

/// What the heartbeat decided for one target and has done so far.
struct Handling {
    /// The stall state to store.
    next: StallState,
    diagnosis: Diagnosis,
    action: CheckAction,
    /// Something was typed or written.
    applied: bool,
    /// The wait state to store.
    waits: WaitState,
    failed: bool,
}

/// One target: read its screen and channels, run the wait core and then the stall core on
/// what is not a wait, end the wait or carry the diagnosis out, report, store its state.
fn check_target(
    world: &World<'_>,
    options: &CheckOptions,
    beat: &Heartbeat<'_>,
    target: &str,
    snap: &crate::tmux::Snapshot,
    doc: &mut state_file::StateDocument,
    now: Time,
) -> TargetChecked {
    let view = world.view(snap, options.agent, now);
    let mut before = doc.targets.get(target).cloned().unwrap_or_default();
    // The same cross-check as `run tick`: the hooks' messages (Claude Code's own lines
    // on the screen are not the agent's) and their word on the screen's prompt.
    let seen = super::channel_state(world, Some(&view), beat.task);
    let (reading, channel_use) =
        channels::cross_check(seen.as_ref(), &view, &before, now, &options.channels);
    let waits_before = doc.waits.get(target).cloned().unwrap_or_default();
    let (waits, verdict) = wait_stage(
        &mut before,
        &waits_before,
        &view,
        &channel_use,
        beat,
        options,
        now,
    );
    // The wait core decides what is a wait: a screen it does not wait on is watched for
    // stalls like any other, and a wait past its maximum no longer hides a stall.
    let mut obs = Sample::of(&view, beat.signal.clone(), beat.status.clone());
    obs.wait = verdict.pauses.then(|| verdict.reason.clone());
    channel_use.apply_to(&mut obs);
    let reset_at = limit_reset(&view, &channel_use, beat.recorded.as_ref(), now);
    let (next, diagnosis) = stall::heartbeat(&before, &obs, now, &options.limits, beat.effects);
    let mut done = Handling {
        next,
        action: CheckAction::from(diagnosis.response),
        diagnosis,
        applied: false,
        waits,
        failed: false,
    };
    // The wait core's end of a wait, where the stall core has nothing of its own to do.
    if matches!(done.diagnosis.response, Response::None | Response::Wait) {
        end_wait(
            world, options, beat, target, &view, &verdict, &mut done, now,
        );
    }
    if let Err(err) = carry_out(world, beat, target, &view, &obs, &mut done, now) {
        output::error_line(&format!("{target}: {err:#}"));
        return TargetChecked {
            report: None,
            failed: true,
        };
    }
    let report = report(
        target,
        &view,
        &obs,
        &done.next,
        &done.diagnosis,
        done.action,
        done.applied,
        &options.limits,
        now,
        &beat.continuation,
        reading,
        reset_at,
        &done.waits,
    );
    let failed = done.failed;
    store(doc, target, done);
    TargetChecked {
        report: Some(report),
        failed,
    }
}

/// Keep the target's stall state, and its wait state unless it is empty.
fn store(doc: &mut state_file::StateDocument, target: &str, done: Handling) {
    doc.targets.insert(target.to_string(), done.next);
    if done.waits == WaitState::default() {
        doc.waits.remove(target);
    } else {
        doc.waits.insert(target.to_string(), done.waits);
    }
}

/// When the limit resets, from whichever source knows: the banner on the screen, the
/// status line's exhausted window, the StopFailure hook's quota-wait record (its reset while
/// it is ahead: an active record).
fn limit_reset(
    view: &PaneView,
    channel_use: &Use,
    recorded: Option<&Recorded>,
    now: Time,
) -> Option<String> {
    view.classification
        .reset_at
        .clone()
        .or_else(|| {
            channel_use
                .window
                .map(|w| crate::time::format_time(w.reset))
        })
        .or_else(|| {
            recorded
                .and_then(|r| r.reset)
                .filter(|reset| now < *reset)
                .map(crate::time::format_time)
        })
}

/// The wait core's act: escalate (never a second time by the stall heartbeat), or with
/// `--apply` type the resume (recorded before it is typed) or one Esc (a stall recovery).
#[allow(clippy::too_many_arguments)]
fn end_wait(
    world: &World<'_>,
    options: &CheckOptions,
    beat: &Heartbeat<'_>,
    target: &str,
    view: &PaneView,
    verdict: &wait::Ruling,
    done: &mut Handling,
    now: Time,
) {
    let typed = match &verdict.act {
        Act::None | Act::Wait => return,
        Act::Escalate { .. } => {
            done.next.escalated_hash = Some(view.key.clone());
            done.action = CheckAction::Escalate;
            done.diagnosis.reason = format!("escalate: {}", verdict.reason);
            return;
        }
        Act::Resume(resume) => {
            done.action = CheckAction::Resume;
            done.diagnosis.reason = format!(
                "resume: {}: type {:?}",
                verdict.reason, options.wait_limits.resume_text
            );
            if !options.apply {
                return;
            }
            // Recorded before it is typed: a resume is typed at most once, even when this
            // heartbeat dies mid-way (a lost one ends at the maximum).
            wait::resumed(&mut done.waits, resume, now);
            let keys = vec![
                Key::Text(options.wait_limits.resume_text.clone()),
                Key::Key("Enter".to_string()),
            ];
            type_keys(world, view, keys, beat.task)
        }
        Act::Esc => {
            done.action = CheckAction::Esc;
            done.diagnosis.reason = format!("esc: {}", verdict.reason);
            if !options.apply {
                return;
            }
            let typed = type_keys(world, view, vec![Key::Key("Escape".to_string())], beat.task);
            if let Ok(None) = typed {
                wait::escaped(&mut done.waits, now);
                done.next.recovered(&stall::Recovery {
                    hash: view.hash.clone(),
                    spend: stall::Spend::Recovery,
                    restarts_step_clock: None,
                });
            }
            typed
        }
    };
    match typed {
        Ok(None) => done.applied = true,
        Ok(Some(why)) => done.diagnosis.reason = why,
        Err(err) => {
            output::error_line(&format!("{target}: {err:#}"));
            done.failed = true;
        }
    }
}

/// The stall core's diagnosis where it is to be performed: type the answer or the
/// continuation, or write `.auto-stop`; log the approval (or the escalation); without a
/// task, say a stop needs `--task`. An error leaves the target's state as it was.
fn carry_out(
    world: &World<'_>,
    beat: &Heartbeat<'_>,
    target: &str,
    view: &PaneView,
    obs: &Sample,
    done: &mut Handling,
    now: Time,
) -> Result<()> {
    if !done.diagnosis.perform {
        if done.action == CheckAction::Escalate {
            super::log_approval(world, target, view, false, now);
        } else if done.diagnosis.response == Response::Stop && beat.task.is_none() {
            done.diagnosis
                .reason
                .push_str("; pass --task DIR to have .auto-stop written");
        }
        return Ok(());
    }
    match done.diagnosis.response {
        Response::Answer | Response::Continue => type_response(world, beat, view, obs, done)?,
        Response::Stop => {
            let task = beat.task.expect("stop is only performed with --task");
            let stop = Effect::WriteStop {
                reason: done.diagnosis.stop_reason().to_string(),
                message: Some(format!("autoctl stall check: {}", done.diagnosis.reason)),
            };
            // On failure the state keeps the old counters, so the next heartbeat asks again.
            perform(world, target, task, &stop, Duration::ZERO, now)?;
            done.applied = true;
        }
        _ => {}
    }
    done.action = CheckAction::from(done.diagnosis.response);
    if done.applied && done.diagnosis.response == Response::Answer {
        super::log_approval(world, target, view, true, now);
    }
    Ok(())
}

/// Type the answer the screen's rule names, or the continuation; a continuation only while
/// `updated_at` is still the one this heartbeat saw (seed 002's compare-and-swap). When
/// nothing was typed the state counts no recovery.
fn type_response(
    world: &World<'_>,
    beat: &Heartbeat<'_>,
    view: &PaneView,
    obs: &Sample,
    done: &mut Handling,
) -> Result<()> {
    let continuing = done.diagnosis.response == Response::Continue;
    let answer = Answer {
        pane_id: view.pane_id.clone(),
        hash: view.hash.clone(),
        keys: if continuing {
            beat.continuation.to_vec()
        } else {
            view.classification.keys.clone()
        },
        if_unchanged: obs
            .status
            .as_ref()
            .filter(|_| continuing)
            .map(|seen| seen.updated_at.clone()),
    };
    match type_answer(world, &answer, beat.task)? {
        None => {
            if let Some(recovery) = &done.diagnosis.recovery {
                done.next.recovered(recovery);
            }
            done.applied = true;
        }
        Some(why) => {
            done.diagnosis = Diagnosis {
                response: Response::None,
                perform: false,
                reason: why,
                recovery: None,
                ..done.diagnosis.clone()
            };
        }
    }
    Ok(())
}

fn default_state_path(socket: Option<&str>) -> Result<PathBuf> {
    let dir = crate::supervise::state_dir()?.join("stall");
    create_private_dir(&dir)?;
    Ok(dir.join(format!("{}.json", socket.unwrap_or("default"))))
}

fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))
}

/// The task's latest signal as the stall core counts it, read as `run tick` reads it
/// ([`super::runs::read_signal`]); an invalid one is a warning.
fn signal_mark(task: &Path) -> Result<Option<SignalMark>> {
    crate::fsx::require_dir(task)?;
    Ok(match super::runs::read_signal(task)? {
        SignalObs::Valid { signal, .. } => Some(SignalMark::of(&signal)),
        SignalObs::Missing => None,
        SignalObs::Invalid(problem) => {
            output::warn(&format!(
                "{} is invalid ({problem}); iterations are not tracked this time",
                signal::path_in(task).display(),
            ));
            None
        }
    })
}

/// The task's status time and its quota-wait record (whether or not its reset has passed:
/// the wait core resumes an agent still idle on it); problems reading them are warnings (the
/// pane is still watched).
fn task_inputs(task: &Path) -> (Option<StatusMark>, Option<Recorded>) {
    let status = inputs::status_mark(task).unwrap_or_else(|why| {
        output::warn(&format!("{why}; no step timeout this time"));
        None
    });
    let recorded = inputs::quota_record(task).unwrap_or_else(|why| {
        output::warn(&format!("{why}; the quota-wait record is ignored"));
        None
    });
    (status, recorded.map(|(why, reset)| Recorded { reset, why }))
}

/// Run the wait core on one target, and keep its timeout clock (the paused time the step
/// timeout does not count) in the stall state, as `run tick` does.
fn wait_stage(
    stall: &mut StallState,
    before: &WaitState,
    view: &PaneView,
    channel_use: &Use,
    beat: &Heartbeat<'_>,
    options: &CheckOptions,
    now: Time,
) -> (WaitState, wait::Ruling) {
    let c = &view.classification;
    let recovery_left = stall.recoveries_iteration < options.limits.recoveries_per_iteration
        && stall.recoveries_total < options.limits.recoveries_total;
    let obs = WaitObs {
        hash: &view.hash,
        key: &view.key,
        class: c.class,
        action: c.action,
        rule: c.rule.as_deref(),
        observe_only: c.observe_only || view.dead,
        screen: &view.waiting,
        classified_reset: c.reset_at.as_deref().and_then(crate::time::parse_time),
        window: channel_use.window,
        failure: channel_use.failure.clone(),
        recorded: beat.recorded.clone(),
        tool_hook_since: channel_use.tool_since,
        child_cpu: view
            .waiting
            .busy
            .then(|| crate::proc::child_cpu(view.pid))
            .flatten(),
        step: beat.step.clone(),
        wait_weekly: options.channels.wait_weekly,
        recovery_left,
        // No governor at the cron door: panes are not runs of an account.
        paced: None,
    };
    wait::rule(
        before,
        &obs,
        now,
        &options.wait_limits,
        &mut stall.clock_paused_since,
        &mut stall.clock_paused_seconds,
    )
}

/// Type keys of the wait core's into the pane under the same lock and checks as an answer;
/// `Some(why)` when nothing was typed.
fn type_keys(
    world: &World<'_>,
    view: &PaneView,
    keys: Vec<Key>,
    task: Option<&Path>,
) -> Result<Option<String>> {
    let answer = Answer {
        pane_id: view.pane_id.clone(),
        hash: view.hash.clone(),
        keys,
        if_unchanged: None,
    };
    type_answer(world, &answer, task)
}

#[allow(clippy::too_many_arguments)]
fn report(
    target: &str,
    view: &PaneView,
    obs: &Sample,
    state: &StallState,
    diagnosis: &Diagnosis,
    action: CheckAction,
    applied: bool,
    limits: &Limits,
    now: Time,
    continuation: &[Key],
    reading: Reading,
    reset_at: Option<String>,
    waits: &WaitState,
) -> CheckReport {
    let seen: &Classification = &view.classification;
    let mut reason = diagnosis.reason.clone();
    if diagnosis.condition != Condition::Progress && diagnosis.condition != Condition::Unchanged {
        reason.push_str(&format!(" ({})", seen.reason));
    }
    CheckReport {
        target: target.to_string(),
        pane: view.pane_id.clone(),
        foreground: view.foreground.clone(),
        verdict: diagnosis.condition,
        class: seen.class,
        action,
        applied,
        destructive: seen.destructive,
        keys: match action {
            CheckAction::Answer => seen.keys.clone(),
            CheckAction::Continue => continuation.to_vec(),
            _ => Vec::new(),
        },
        rule: seen.rule.clone(),
        matched: seen.matched.clone(),
        reason,
        hash: obs.hash.clone(),
        unchanged: state.unchanged,
        threshold: limits.threshold,
        recoveries: Recoveries {
            iteration: state.recoveries_iteration,
            total: state.recoveries_total,
            max_per_iteration: limits.recoveries_per_iteration,
            max_total: limits.recoveries_total,
        },
        answers: Answers {
            step: state.answers_step,
            total: state.answers_total,
            max_per_step: limits.max_answers,
        },
        clock_paused_since: state.clock_paused_since,
        clock_paused_seconds: state.clock_paused_seconds,
        reset_at,
        message_repeats: state.message_repeats,
        status_updated_at: obs.status.as_ref().map(|s| s.updated_at.clone()),
        step_elapsed_seconds: obs
            .status
            .as_ref()
            .and_then(|_| state.step_elapsed(now))
            .map(|d| d.as_secs()),
        state: reading,
        wait: waits.open.as_ref().map(|open| WaitReport {
            kind: open.kind,
            since: open.since,
            max_at: open.max_at,
        }),
    }
}

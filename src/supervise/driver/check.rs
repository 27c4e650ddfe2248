//! Driving `stall check`: panes named on the command line (or every pane of the server),
//! their stall state in one JSON file ([`crate::supervise::stall::state_file`]). One
//! heartbeat captures every target in one tmux call, reads each screen, runs the stall
//! heartbeat, types the answer or continuation (see [`super::type_answer`]) and writes
//! `.auto-stop` where `--apply` allows, saves the state, and reports one [`CheckReport`] per
//! target.

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
use crate::supervise::inputs;
use crate::supervise::stall::{
    self, Condition, Diagnosis, Effects, Limits, Response, Sample, SignalMark, StallState,
    StatusMark, state_file,
};
use crate::supervise::tick::Effect;
use crate::supervise::typed::{self, Reading, TypedOptions};
use crate::supervise::typing::Answer;
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
    pub typed: TypedOptions,
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
    pub action: Response,
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
    #[serde(with = "crate::time::stamp::option")]
    pub quota_wait_since: Option<Time>,
    pub quota_waited_seconds: u64,
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

/// One stall heartbeat over the targets.
pub fn check_targets(world: &World<'_>, options: &CheckOptions, now: Time) -> Result<Checked> {
    let task = options.task.as_deref();
    let signal = task.map(read_signal).transpose()?.flatten();
    let (status, external_wait, recorded_reset) = match task {
        Some(task) => task_inputs(task, now),
        None => (None, None, None),
    };
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
    let effects = Effects {
        answer: options.apply,
        restart: false,
        stop: options.apply && task.is_some(),
    };
    let continuation = [
        Key::Text(options.continue_text.clone()),
        Key::Key("Enter".to_string()),
    ];
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
        let view = world.view(&snap, options.agent, now);
        let before = state.doc.targets.get(target).cloned().unwrap_or_default();
        let mut obs = Sample::of(&view, signal.clone(), status.clone(), external_wait.clone());
        // The same cross-check as `run tick`: the hooks' messages (Claude Code's own lines
        // on the screen are not the agent's) and their word on the screen's prompt.
        let typed = super::typed_state(world, Some(&view), task);
        let (reading, typed_use) =
            typed::cross_check(typed.as_ref(), &view, &before, now, &options.typed);
        typed_use.apply_to(&mut obs);
        // When the limit resets, from whichever source knows: the banner on the screen, the
        // status line's exhausted window, the StopFailure hook's quota-wait record.
        let reset_at = view
            .classification
            .reset_at
            .clone()
            .or_else(|| typed_use.window.map(|w| crate::time::format_time(w.reset)))
            .or_else(|| recorded_reset.map(crate::time::format_time));
        let (mut next, mut diagnosis) =
            stall::heartbeat(&before, &obs, now, &options.limits, effects);
        let mut applied = false;
        if diagnosis.perform {
            let carried_out = match diagnosis.response {
                Response::Answer | Response::Continue => {
                    let keys = if diagnosis.response == Response::Answer {
                        view.classification.keys.clone()
                    } else {
                        continuation.to_vec()
                    };
                    // A continuation is sent only while `updated_at` is still the one this
                    // heartbeat saw (seed 002's compare-and-swap).
                    let answer = Answer {
                        pane_id: view.pane_id.clone(),
                        hash: view.hash.clone(),
                        keys,
                        if_unchanged: obs
                            .status
                            .as_ref()
                            .filter(|_| diagnosis.response == Response::Continue)
                            .map(|seen| seen.updated_at.clone()),
                    };
                    type_answer(world, &answer, task).map(|typed| match typed {
                        None => {
                            if let Some(recovery) = &diagnosis.recovery {
                                next.recovered(recovery);
                            }
                            applied = true;
                        }
                        // Nothing was typed: the state counts no recovery.
                        Some(why) => {
                            diagnosis = Diagnosis {
                                response: Response::None,
                                perform: false,
                                reason: why,
                                recovery: None,
                                ..diagnosis.clone()
                            };
                        }
                    })
                }
                Response::Stop => {
                    let task = task.expect("stop is only performed with --task");
                    let stop = Effect::WriteStop {
                        reason: diagnosis.stop_reason().to_string(),
                        message: Some(format!("autoctl stall check: {}", diagnosis.reason)),
                    };
                    // On failure the state keeps the old counters, so the next heartbeat asks
                    // again.
                    perform(world, target, task, &stop, Duration::ZERO, now)
                        .map(|()| applied = true)
                }
                _ => Ok(()),
            };
            if let Err(err) = carried_out {
                output::error_line(&format!("{target}: {err:#}"));
                failed = true;
                continue;
            }
            if applied && diagnosis.response == Response::Answer {
                super::log_approval(world, target, &view, true, now);
            }
        } else if diagnosis.response == Response::Escalate {
            super::log_approval(world, target, &view, false, now);
        } else if diagnosis.response == Response::Stop && task.is_none() {
            diagnosis
                .reason
                .push_str("; pass --task DIR to have .auto-stop written");
        }
        reports.push(report(
            target,
            &view,
            &obs,
            &next,
            &diagnosis,
            applied,
            &options.limits,
            now,
            &continuation,
            reading,
            reset_at,
        ));
        state.doc.targets.insert(target.clone(), next);
    }
    let saved = state.save();
    Ok(Checked {
        reports,
        failed,
        saved,
    })
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

fn read_signal(task: &Path) -> Result<Option<SignalMark>> {
    crate::fsx::require_dir(task)?;
    Ok(match signal::read(task)? {
        signal::Read::Valid(s) => Some(SignalMark::of(&s)),
        signal::Read::Missing => None,
        signal::Read::Invalid(problems) => {
            output::warn(&format!(
                "{} is invalid ({}); iterations are not tracked this time",
                signal::path_in(task).display(),
                problems[0]
            ));
            None
        }
    })
}

/// The task's status time and an active quota-wait record (its reason and reset); problems
/// reading them are warnings (the pane is still watched).
fn task_inputs(task: &Path, now: Time) -> (Option<StatusMark>, Option<String>, Option<Time>) {
    let status = inputs::status_mark(task).unwrap_or_else(|why| {
        output::warn(&format!("{why}; no step timeout this time"));
        None
    });
    let record = inputs::quota_record(task)
        .unwrap_or_else(|why| {
            output::warn(&format!("{why}; the quota-wait record is ignored"));
            None
        })
        .filter(|record| inputs::active(record, now));
    match record {
        Some((why, reset)) => (status, Some(why), reset),
        None => (status, None, None),
    }
}

#[allow(clippy::too_many_arguments)]
fn report(
    target: &str,
    view: &PaneView,
    obs: &Sample,
    state: &StallState,
    diagnosis: &Diagnosis,
    applied: bool,
    limits: &Limits,
    now: Time,
    continuation: &[Key],
    reading: Reading,
    reset_at: Option<String>,
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
        action: diagnosis.response,
        applied,
        destructive: seen.destructive,
        keys: match diagnosis.response {
            Response::Answer => seen.keys.clone(),
            Response::Continue => continuation.to_vec(),
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
        quota_wait_since: state.quota_wait_since,
        quota_waited_seconds: state.quota_waited_seconds,
        reset_at,
        message_repeats: state.message_repeats,
        status_updated_at: obs.status.as_ref().map(|s| s.updated_at.clone()),
        step_elapsed_seconds: obs
            .status
            .as_ref()
            .and_then(|_| state.step_elapsed(now))
            .map(|d| d.as_secs()),
        state: reading,
    }
}

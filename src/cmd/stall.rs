//! `autoctl stall check`: one stall heartbeat over one or many panes.
//!
//! The edge around [`crate::supervise::stall::heartbeat`]: lock and read the state file,
//! capture every target in one tmux call, classify and hash each screen, decide, carry out
//! what `--apply` allows (type the answer, write `.auto-stop`), save the state, print one
//! JSON line per target.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use chrono::Utc;
use clap::{Args, Subcommand};
use serde::Serialize;

use crate::error::{Reported, Verdict};
use crate::fsx;
use crate::output;
use crate::pane::classify::{self, Context as ClassifyContext, Screen};
use crate::pane::normalize;
use crate::pane::reset::Zone;
use crate::pane::{Agent, Key};
use crate::protocol::signal::{self, now_timestamp};
use crate::protocol::stop::{self, StopRequest};
use crate::supervise::answer::{Answer, Typist, always};
use crate::supervise::inputs;
use crate::supervise::stall::{
    Decision, Effects, Limits, Observation, SignalMark, StallState, StatusMark, Step,
    Verdict as StallVerdict, heartbeat,
};
use crate::supervise::{self, state_file};
use crate::taskai::stall::{self as taskai_stall, Continuation};
use crate::tmux::{self, CaptureOptions, PaneInfo, Terminal, Tmux};

use super::pane::{RulesOption, load_rules};

#[derive(Debug, Subcommand)]
pub enum StallCommand {
    /// Run one stall heartbeat: capture, compare with the last capture, decide, maybe recover
    ///
    /// A pane whose normalized screen is unchanged for --threshold captures is stalled; its
    /// classification decides: answer a safe prompt, escalate a destructive one or a
    /// trust/login/picker screen (once per distinct screen), wait out quota and rate limits
    /// (never a stall, no recovery spent). An answer spends a recovery; past the limits,
    /// --task DIR gets an `.auto-stop` with reason stall_limit. A shell in front (the agent
    /// exited) is reported as `restart`, which stall check leaves to the loop. Without
    /// --apply nothing is typed or written except the state: the output says what would be
    /// done.
    ///
    /// Content-based stalls (seed 002): on a Claude Code screen, the same agent message
    /// --repeat-limit times in a row is a reasoning loop (`.auto-stop` with reason
    /// reasoning_loop). With --task, no `.status.json` update for --step-timeout makes the
    /// pane stalled whatever its screen does: a safe prompt is answered, an idle agent gets
    /// --continue-text (only if `updated_at` is still the one seen), anything else is
    /// escalated; each spends a recovery and restarts the step clock. A quota-wait record of
    /// `hook stop-failure` in the task's project (the nearest `.autoctl/` above DIR) is a
    /// wait, like a quota banner.
    ///
    /// Prints one JSON line per target. All targets are captured in one tmux call.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("panes").required(true).args(["targets", "all_panes"]))]
pub struct CheckArgs {
    /// A pane to check (repeat for several)
    #[arg(long = "target", value_name = "TARGET", value_parser = tmux::parse_target)]
    pub targets: Vec<String>,
    /// Check every pane of the tmux server
    #[arg(long)]
    pub all_panes: bool,
    /// Where the state is kept [default: $AUTOCTL_STATE_DIR/stall/SOCKET.json]
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Unchanged captures that make a stall
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub threshold: u32,
    /// Recoveries allowed per signal iteration
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub max_recoveries_per_iteration: u32,
    /// Recoveries allowed in total
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_recoveries: u32,
    /// Carry the decision out: type the answer, write .auto-stop past the limits
    #[arg(long)]
    pub apply: bool,
    /// The task module the pane works on: a new .auto-signal iteration restores the
    /// per-iteration budget, and past the limits its .auto-stop is written
    #[arg(long, value_name = "DIR", conflicts_with = "all_panes")]
    pub task: Option<PathBuf>,
    /// Whose screen it is: with claude, a foreground command other than the agent is observed, never answered
    #[arg(long, value_enum, default_value_t)]
    pub agent: Agent,
    /// The same agent message this many times in a row is a reasoning loop (0: never)
    #[arg(long, value_name = "N", default_value_t = taskai_stall::REPEAT_LIMIT)]
    pub repeat_limit: u32,
    /// With --task: no .status.json update for this long is a step timeout
    #[arg(long, value_name = "DURATION", default_value = "10m",
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub step_timeout: Duration,
    /// What a step timeout types into an idle agent
    #[arg(long, value_name = "TEXT", default_value = taskai_stall::CONTINUATION)]
    pub continue_text: String,
    #[command(flatten)]
    pub rules: RulesOption,
}

pub fn run(command: StallCommand, socket: Option<String>) -> Result<Verdict> {
    match command {
        StallCommand::Check(args) => check(&args, socket),
    }
}

#[derive(Debug, Serialize)]
struct Recoveries {
    iteration: u32,
    total: u32,
    max_per_iteration: u32,
    max_total: u32,
}

#[derive(Debug, Serialize)]
struct Report {
    target: String,
    pane: String,
    foreground: String,
    verdict: StallVerdict,
    class: crate::pane::Class,
    action: Step,
    applied: bool,
    destructive: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    keys: Vec<Key>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    matched: Option<String>,
    reason: String,
    hash: String,
    unchanged: u32,
    threshold: u32,
    recoveries: Recoveries,
    quota_wait_since: Option<String>,
    quota_waited_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reset_at: Option<String>,
    /// How many times in a row the agent said its latest message (Claude Code screens).
    message_repeats: u32,
    /// `.status.json`'s `updated_at` as seen (with --task), and how long the step has gone
    /// without an update (quota waits excluded).
    #[serde(skip_serializing_if = "Option::is_none")]
    status_updated_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    step_elapsed_seconds: Option<u64>,
}

fn default_state_path(socket: Option<&str>) -> Result<PathBuf> {
    let dir = supervise::state_dir()?.join("stall");
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
    fsx::require_dir(task)?;
    Ok(match signal::read(task)? {
        signal::Read::Valid(s) => Some(SignalMark {
            iteration: s.iteration,
            timestamp: s.timestamp,
        }),
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

/// The task's status time and an active quota-wait record; problems reading them are
/// warnings (the pane is still watched).
fn task_inputs(task: &Path, now: chrono::DateTime<Utc>) -> (Option<StatusMark>, Option<String>) {
    let status = inputs::status_mark(task).unwrap_or_else(|why| {
        output::warn(&format!("{why}; no step timeout this time"));
        None
    });
    let wait = inputs::quota_wait(task, now).unwrap_or_else(|why| {
        output::warn(&format!("{why}; the quota-wait record is ignored"));
        None
    });
    (status, wait)
}

/// A continuation text is typed into an agent: one line, no control characters.
pub fn check_continuation(text: &str) -> Result<()> {
    if text.trim().is_empty() {
        bail!("the continuation text is empty");
    }
    if text.chars().any(char::is_control) {
        bail!(
            "the continuation text {text:?} contains a control character (it is typed as one line, then Enter)"
        );
    }
    if text.len() > 4096 {
        bail!("the continuation text is longer than 4096 bytes");
    }
    Ok(())
}

fn check(args: &CheckArgs, socket: Option<String>) -> Result<Verdict> {
    if args.task.is_some() && args.targets.len() != 1 {
        bail!("--task goes with exactly one --target (the pane that works on that task)");
    }
    check_continuation(&args.continue_text)?;
    let rules = load_rules(args.rules.rules.as_ref())?;
    let tmux = Tmux::new(socket.clone())?;
    let now = crate::time::now()?;
    let signal = args.task.as_deref().map(read_signal).transpose()?.flatten();
    let (status, external_wait) = match args.task.as_deref() {
        Some(task) => task_inputs(task, now),
        None => (None, None),
    };
    let targets: Vec<String> = if args.all_panes {
        tmux.list_panes()?.into_iter().map(|p| p.id).collect()
    } else {
        args.targets.clone()
    };
    let state_path = match &args.state {
        Some(path) => path.clone(),
        None => default_state_path(socket.as_deref())?,
    };
    let mut state = state_file::open(&state_path)?;
    let snapshots = tmux.snapshots(&targets, CaptureOptions::default())?;
    let state_dir = supervise::state_dir()?;
    let typist = Typist {
        terminal: &tmux,
        socket: socket.as_deref(),
        state_dir: &state_dir,
        masks: &rules.masks,
    };

    let limits = Limits {
        threshold: args.threshold,
        per_iteration: args.max_recoveries_per_iteration,
        total: args.max_recoveries,
        repeat_limit: args.repeat_limit,
        step_timeout: Some(args.step_timeout),
    };
    let effects = Effects {
        answer: args.apply,
        restart: false,
        stop: args.apply && args.task.is_some(),
    };
    let continuation = [
        Key::Text(args.continue_text.clone()),
        Key::Key("Enter".to_string()),
    ];
    let ctx = ClassifyContext {
        agent: args.agent,
        now,
        zone: Zone::from_env(),
    };
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
        let screen = Screen::from_text(&snap.text, Some(snap.pane.command.clone()));
        let seen = classify::classify(&screen, rules, &ctx);
        let obs = Observation {
            hash: normalize::hash(&snap.text, &rules.masks),
            class: seen.class,
            action: seen.action,
            observe_only: seen.observe_only || snap.pane.dead,
            answered_marker: snap.pane.answered.clone(),
            signal: signal.clone(),
            messages: inputs::messages(args.agent, &snap.text),
            status: status.clone(),
            external_wait: external_wait.clone(),
        };
        let before = state.doc.targets.get(target).cloned().unwrap_or_default();
        let (mut next, mut decision) = heartbeat(&before, &obs, now, &limits, effects);
        let mut applied = false;
        if decision.perform {
            match decision.step {
                Step::Answer | Step::Continue => {
                    let keys: &[Key] = if decision.step == Step::Answer {
                        &seen.keys
                    } else {
                        &continuation
                    };
                    let answer = Answer {
                        pane_id: &snap.pane.id,
                        hash: &obs.hash,
                        keys,
                    };
                    // A continuation is sent only while `updated_at` is still the one this
                    // heartbeat saw (seed 002's compare-and-swap): checked under the pane lock.
                    let unchanged = || -> Result<Option<String>> {
                        let (Some(task), Some(seen)) = (args.task.as_deref(), obs.status.as_ref())
                        else {
                            return Ok(None);
                        };
                        Ok(match inputs::continuation_cas(&seen.updated_at, task) {
                            Continuation::Send => None,
                            Continuation::Abort { reason } => Some(reason),
                        })
                    };
                    let precondition: &dyn Fn() -> Result<Option<String>> =
                        if decision.step == Step::Continue {
                            &unchanged
                        } else {
                            &always
                        };
                    match typist.answer_once(answer, precondition) {
                        Ok(None) => applied = true,
                        Ok(Some(why)) => {
                            // Nothing was typed: the state must not count a recovery.
                            (next, decision) = heartbeat(
                                &before,
                                &obs,
                                now,
                                &limits,
                                Effects {
                                    answer: false,
                                    ..effects
                                },
                            );
                            decision = Decision {
                                step: Step::None,
                                reason: why,
                                ..decision
                            };
                        }
                        Err(err) => {
                            output::error_line(&format!("{target}: {err:#}"));
                            failed = true;
                            continue;
                        }
                    }
                }
                Step::Stop => {
                    let task = args
                        .task
                        .as_deref()
                        .expect("stop is only performed with --task");
                    let request = StopRequest {
                        reason: decision.stop_reason().to_string(),
                        timestamp: now_timestamp(now),
                        message: Some(format!("autoctl stall check: {}", decision.reason)),
                    };
                    if let Err(err) = stop::write(task, &request) {
                        // The state keeps the old counters, so the next heartbeat asks again.
                        output::error_line(&format!("{target}: {err:#}"));
                        failed = true;
                        continue;
                    }
                    applied = true;
                }
                _ => {}
            }
        } else if decision.step == Step::Stop && args.task.is_none() {
            decision
                .reason
                .push_str("; pass --task DIR to have .auto-stop written");
        }
        reports.push(report(
            target,
            &snap.pane,
            &seen,
            &obs,
            &next,
            &decision,
            applied,
            &limits,
            now,
            &continuation,
        ));
        state.doc.targets.insert(target.clone(), next);
    }
    // Save before printing: a reader that goes away early (`| head -0`) must not cost the
    // counters this heartbeat advanced (answers typed, recoveries spent).
    let saved = state.save();
    let printed = reports.iter().try_for_each(output::json_line);
    saved?;
    printed?;
    if failed {
        return Err(Reported.into());
    }
    Ok(Verdict::Yes)
}

#[allow(clippy::too_many_arguments)]
fn report(
    target: &str,
    pane: &PaneInfo,
    seen: &classify::Classification,
    obs: &Observation,
    state: &StallState,
    decision: &Decision,
    applied: bool,
    limits: &Limits,
    now: chrono::DateTime<Utc>,
    continuation: &[Key],
) -> Report {
    let mut reason = decision.reason.clone();
    if decision.verdict != StallVerdict::Progress && decision.verdict != StallVerdict::Unchanged {
        reason.push_str(&format!(" ({})", seen.reason));
    }
    Report {
        target: target.to_string(),
        pane: pane.id.clone(),
        foreground: pane.command.clone(),
        verdict: decision.verdict,
        class: seen.class,
        action: decision.step,
        applied,
        destructive: seen.destructive,
        keys: match decision.step {
            Step::Answer => seen.keys.clone(),
            Step::Continue => continuation.to_vec(),
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
            max_per_iteration: limits.per_iteration,
            max_total: limits.total,
        },
        quota_wait_since: state.quota_wait_since.clone(),
        quota_waited_seconds: state.quota_waited_seconds,
        reset_at: seen.reset_at.clone(),
        message_repeats: state.message_repeats,
        status_updated_at: obs.status.as_ref().map(|s| s.updated_at.clone()),
        step_elapsed_seconds: obs
            .status
            .as_ref()
            .and_then(|_| state.step_elapsed(now))
            .map(|d| d.as_secs()),
    }
}

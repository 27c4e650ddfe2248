//! `autoctl graph run`: run a command for every sub-issue of an XL graph, level by level, at
//! most N at once, skipping what depends on a failure — wholework's Step 4 loop
//! (`run-auto-sub.sh $SUB & … wait -n … wait`) as one command with an end to every wait.
//!
//! The edge around the pure parts: [`super::graph::levels`] decides the levels and which
//! issues a failure skips (recomputed when a level had new failures), [`super::window::Slots`]
//! decides when each issue starts (a sliding window or fixed batches). Here: spawning,
//! polling, timeouts and signals.
//!
//! Each command runs in its own process group, so a timeout or an interrupt stops the whole
//! tree it started (`claude -p` under a shell script): TERM to the group, then KILL after
//! [`GRACE`]. Its stdout and stderr go to autoctl's stderr, so autoctl's stdout carries only
//! the results. SIGINT, SIGTERM and SIGHUP stop every running command the same way before
//! autoctl exits 130.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use super::graph::{self, Node};
use super::window::{Schedule, Slots};

/// How long a command has between TERM and KILL.
pub const GRACE: Duration = Duration::from_secs(5);
/// How often running commands are polled.
const POLL: Duration = Duration::from_millis(20);

/// How a sub-issue ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    Success,
    Failed,
    /// Stopped at `--timeout` (counts as a failure).
    Timeout,
    /// Not run: something it depends on failed.
    Skipped,
    /// Stopped because autoctl was interrupted.
    Interrupted,
}

/// One result line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finished {
    pub number: u64,
    pub level: usize,
    pub outcome: Ending,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// For a skipped issue: the failed issue at the root of the chain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Finished {
    /// wholework's result column: SUCCESS, FAILED (exit code N), SKIPPED (blocked by #X).
    pub fn result_text(&self) -> String {
        match self.outcome {
            Ending::Success => "SUCCESS".to_string(),
            Ending::Failed => match (self.exit_code, self.signal, &self.error) {
                (Some(code), _, _) => format!("FAILED (exit code {code})"),
                (_, Some(signal), _) => format!("FAILED (signal {signal})"),
                (_, _, Some(error)) => format!("FAILED ({error})"),
                _ => "FAILED".to_string(),
            },
            Ending::Timeout => "FAILED (timeout)".to_string(),
            Ending::Skipped => format!("SKIPPED (blocked by #{})", self.blocked_by.unwrap_or(0)),
            Ending::Interrupted => "INTERRUPTED".to_string(),
        }
    }
}

/// What to run and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub max_concurrent: usize,
    pub schedule: Schedule,
    /// The longest one command may run.
    pub timeout: Duration,
    /// The command; `{}` in an argument is replaced by the issue number, else the number is
    /// appended.
    pub command: Vec<OsString>,
}

/// The totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub success: usize,
    pub failed: usize,
    pub skipped: usize,
    pub interrupted: bool,
}

/// The argv for one issue.
pub fn argv(command: &[OsString], number: u64) -> Vec<OsString> {
    let n = number.to_string();
    let mut replaced = false;
    let mut args: Vec<OsString> = command
        .iter()
        .map(|arg| match arg.to_str() {
            Some(text) if text.contains("{}") => {
                replaced = true;
                OsString::from(text.replace("{}", &n))
            }
            _ => arg.clone(),
        })
        .collect();
    if !replaced {
        args.push(OsString::from(n));
    }
    args
}

struct Running {
    number: usize,
    child: Child,
    started: Instant,
    /// When TERM was sent (timeout or interrupt), and why.
    stopping: Option<(Instant, Ending)>,
}

/// Run the graph. `report` gets every result as it is known (skips when their level comes).
/// `stop` is set by a signal handler; the run then stops every command and returns
/// [`crate::error::Interrupted`].
pub fn run(
    nodes: &[Node],
    given_failed: &[u64],
    options: &Options,
    stop: &Arc<AtomicBool>,
    report: &mut dyn FnMut(&Finished) -> io::Result<()>,
) -> Result<Summary> {
    let mut failed: Vec<u64> = given_failed.to_vec();
    let mut plan = graph::levels(nodes, &failed, options.max_concurrent)?;
    let mut summary = Summary::default();
    let mut replan = false;
    for index in 0..plan.levels.len() {
        if replan {
            plan = graph::levels(nodes, &failed, options.max_concurrent)?;
            replan = false;
        }
        let level = &plan.levels[index];
        for skipped in &level.skipped {
            summary.skipped += 1;
            report(&Finished {
                number: skipped.number,
                level: index,
                outcome: Ending::Skipped,
                exit_code: None,
                signal: None,
                duration_ms: None,
                blocked_by: Some(skipped.blocked_by),
                error: None,
            })?;
        }
        let issues: Vec<u64> = level.batches.concat();
        let outcomes = run_level(index, &issues, options, stop, report)?;
        for finished in &outcomes {
            match finished.outcome {
                Ending::Success => summary.success += 1,
                Ending::Interrupted => summary.interrupted = true,
                _ => {
                    summary.failed += 1;
                    failed.push(finished.number);
                    replan = true;
                }
            }
        }
        if summary.interrupted {
            return Err(anyhow::Error::new(crate::error::Interrupted));
        }
    }
    Ok(summary)
}

fn run_level(
    level: usize,
    issues: &[u64],
    options: &Options,
    stop: &Arc<AtomicBool>,
    report: &mut dyn FnMut(&Finished) -> io::Result<()>,
) -> Result<Vec<Finished>> {
    let mut slots = Slots::new(
        options.schedule,
        options.max_concurrent,
        issues.iter().copied(),
    );
    let mut running: Vec<Running> = Vec::new();
    let mut done = Vec::new();
    let mut finish = |finished: Finished, done: &mut Vec<Finished>| -> io::Result<()> {
        report(&finished)?;
        done.push(finished);
        Ok(())
    };
    loop {
        let interrupted = stop.load(Ordering::SeqCst);
        if !interrupted {
            for number in slots.start() {
                match spawn(options, number, level) {
                    Ok(child) => running.push(Running {
                        number: number as usize,
                        child,
                        started: Instant::now(),
                        stopping: None,
                    }),
                    Err(err) => {
                        slots.finished();
                        finish(
                            Finished {
                                number,
                                level,
                                outcome: Ending::Failed,
                                exit_code: None,
                                signal: None,
                                duration_ms: None,
                                blocked_by: None,
                                error: Some(format!("{err:#}")),
                            },
                            &mut done,
                        )?;
                    }
                }
            }
        }
        let mut still = Vec::with_capacity(running.len());
        for mut run in running.drain(..) {
            let now = Instant::now();
            match run
                .child
                .try_wait()
                .context("cannot wait for a sub-issue's command")?
            {
                Some(status) => {
                    slots.finished();
                    let outcome = match run.stopping {
                        Some((_, why)) => why,
                        None if status.success() => Ending::Success,
                        None => Ending::Failed,
                    };
                    finish(
                        Finished {
                            number: run.number as u64,
                            level,
                            outcome,
                            exit_code: status.code(),
                            signal: status.signal(),
                            duration_ms: Some(
                                u64::try_from(run.started.elapsed().as_millis())
                                    .unwrap_or(u64::MAX),
                            ),
                            blocked_by: None,
                            error: None,
                        },
                        &mut done,
                    )?;
                    continue;
                }
                None => {
                    match run.stopping {
                        None if interrupted => {
                            signal_group(&mut run.child, "TERM");
                            run.stopping = Some((now, Ending::Interrupted));
                        }
                        None if now.duration_since(run.started) > options.timeout => {
                            signal_group(&mut run.child, "TERM");
                            run.stopping = Some((now, Ending::Timeout));
                        }
                        Some((since, _)) if now.duration_since(since) > GRACE => {
                            signal_group(&mut run.child, "KILL");
                        }
                        _ => {}
                    }
                    still.push(run);
                }
            }
        }
        running = still;
        if running.is_empty() && (slots.is_done() || interrupted) {
            return Ok(done);
        }
        std::thread::sleep(POLL);
    }
}

fn spawn(options: &Options, number: u64, level: usize) -> Result<Child> {
    let args = argv(&options.command, number);
    let (program, rest) = args.split_first().context("no command to run")?;
    Command::new(program)
        .args(rest)
        .env("AUTOCTL_ISSUE", number.to_string())
        .env("AUTOCTL_LEVEL", level.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::from(io::stderr()))
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot run {} for #{number}", program.to_string_lossy()))
}

/// Send `signal` to the command's process group (the tree it started); without a `kill`
/// program, KILL the command itself.
fn signal_group(child: &mut Child, signal: &str) {
    let group = format!("-{}", child.id());
    let sent = Command::new("kill")
        .args(["-s", signal, "--", &group])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !sent {
        let _ = child.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_number_replaces_braces_or_is_appended() {
        let cmd = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            argv(&cmd(&["run-auto-sub.sh"]), 7),
            cmd(&["run-auto-sub.sh", "7"])
        );
        assert_eq!(
            argv(&cmd(&["sh", "-c", "echo {} > out-{}"]), 7),
            cmd(&["sh", "-c", "echo 7 > out-7"])
        );
    }
}

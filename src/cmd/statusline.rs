//! `autoctl statusline`: Claude Code's `statusLine` command. Prints one short line and records
//! the status line's rate limits and context use for the supervisors (see
//! [`crate::hook::statusline`]).
//!
//! Like the hook commands it exits 0 whatever goes wrong (one line on stderr): a status line
//! that fails must never disturb the session.

use std::io::{self, BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::error::Exit;
use crate::fsx::{self, Bounded};
use crate::hook::session::Payload;
use crate::hook::state::{self, LoopDir};
use crate::hook::statusline::{self, Iteration, StatusInput, StatusRecord};
use crate::hook::store::{HookEnv, Store};
use crate::output;

/// The status-line input is a few kilobytes.
const STDIN_LIMIT: u64 = 1024 * 1024;
/// How long a wrapped status line may take before autoctl prints its own part alone.
const THEN_TIMEOUT: Duration = Duration::from_secs(2);

/// Print Claude Code's status line and record its rate limits and context use
///
/// Wire it as settings.json's statusLine command (`autoctl hook install` does): Claude Code
/// pipes the status JSON to it after each message. It prints one line — the model, context
/// use, the 5-hour and 7-day usage with their reset times in local time, and the
/// Stop-hook loop's iteration when one runs — and records `rate_limits`
/// (used_percentage, resets_at to the second) and `context_window` in
/// $AUTOCTL_STATE_DIR/hooks/, where `run tick` reads the exact reset time of a usage limit
/// and the context use for --compact-at. The record is written only when it changed (or
/// once a minute, to show the status line is alive), atomically, without fsync.
///
/// With --then CMD, CMD (run by `sh -c`, with the same input) is the status line you had:
/// its first line is printed first, then autoctl's, on one line.
///
/// Exit status: always 0; a problem is one line on stderr.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct StatuslineArgs {
    /// Also run this status-line command and print its first line before autoctl's
    #[arg(long, value_name = "CMD")]
    pub then: Option<String>,
}

pub fn run(args: &StatuslineArgs) -> Result<Exit> {
    // Claude Code runs it as a hook runs: a relative `HOME` is ignored, not an error.
    crate::supervise::ignore_relative_home();
    let bytes = match fsx::read_bounded_from(io::stdin().lock(), STDIN_LIMIT) {
        Ok(Bounded::Complete(bytes)) => bytes,
        Ok(Bounded::TooLarge { limit }) => {
            output::error_line(&format!(
                "statusline: stdin is larger than {}: not a status-line input",
                fsx::human_size(limit)
            ));
            Vec::new()
        }
        Err(err) => {
            output::error_line(&format!("statusline: cannot read stdin: {err}"));
            Vec::new()
        }
    };
    // The wrapped command runs while autoctl does its own part.
    let foreign = args
        .then
        .as_deref()
        .and_then(|cmd| Foreign::start(cmd, &bytes));
    let ours = match serde_json::from_slice::<StatusInput>(&bytes) {
        Ok(input) => own_line(&input),
        Err(err) => {
            if !bytes.is_empty() {
                output::error_line(&format!(
                    "statusline: stdin is not a status-line input ({err})"
                ));
            }
            String::new()
        }
    };
    let theirs = foreign.and_then(Foreign::first_line).unwrap_or_default();
    let line = match (theirs.is_empty(), ours.is_empty()) {
        (false, false) => format!("{theirs} · {ours}"),
        (false, true) => theirs,
        (true, _) => ours,
    };
    if !line.is_empty() {
        let mut out = io::stdout().lock();
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            return Ok(Exit::Yes);
        }
    }
    Ok(Exit::Yes)
}

/// Record the input and render autoctl's part of the line.
fn own_line(input: &StatusInput) -> String {
    let now = match crate::time::now() {
        Ok(now) => now,
        Err(err) => {
            output::error_line(&format!("statusline: {err:#}"));
            return String::new();
        }
    };
    let payload = Payload {
        session_id: input.session_id.clone(),
        cwd: input.cwd.clone(),
        ..Payload::default()
    };
    let record = HookEnv::from_env().key(&payload).map(|key| {
        let record = StatusRecord::of(input, &key.label(), now);
        match Store::from_env() {
            Ok(store) => {
                let previous = store.read_status(&key).ok().flatten();
                if let Some(changed) = statusline::next(previous.as_ref(), record.clone()) {
                    let mut warnings = Vec::new();
                    if let Err(err) = store.write_status(&key, &changed, &mut warnings) {
                        warnings.push(format!("{err:#}"));
                    }
                    for warning in warnings {
                        output::error_line(&format!("statusline: {warning}"));
                    }
                }
            }
            Err(err) => output::error_line(&format!("statusline: {err:#}")),
        }
        record
    });
    let record = record.unwrap_or_else(|| StatusRecord::of(input, "", now));
    statusline::render(
        &record,
        loop_iteration(input),
        now,
        &statusline::local_zone(),
    )
}

/// The project's Stop-hook loop, if one runs: `loop N/MAX`.
fn loop_iteration(input: &StatusInput) -> Option<Iteration> {
    let project = std::env::var_os("CLAUDE_PROJECT_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            input
                .workspace
                .as_ref()
                .and_then(|w| w.project_dir.clone())
                .map(PathBuf::from)
        })
        .or_else(|| input.cwd.clone().map(PathBuf::from))?;
    let dir = LoopDir::new(&project);
    if !state::dir_exists(&dir) {
        return None;
    }
    let config = state::read_config(&dir).ok().flatten()?;
    let state = state::read_state(&dir).ok().flatten();
    if state.as_ref().is_some_and(|s| s.ended.is_some()) {
        return None;
    }
    Some(Iteration {
        current: state.map_or(0, |s| s.iteration),
        max: config.max_iterations,
    })
}

/// A wrapped status-line command, running.
struct Foreign {
    child: std::process::Child,
    first_line: std::sync::mpsc::Receiver<Vec<u8>>,
}

impl Foreign {
    fn start(command: &str, input: &[u8]) -> Option<Foreign> {
        let mut child = match Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
        {
            Ok(child) => child,
            Err(err) => {
                output::error_line(&format!("statusline: cannot run --then command: {err}"));
                return None;
            }
        };
        if let Some(mut stdin) = child.stdin.take() {
            let input = input.to_vec();
            // A command that does not read its input must not block us: write from a thread.
            std::thread::spawn(move || {
                let _ = stdin.write_all(&input);
            });
        }
        let stdout = child.stdout.take()?;
        let (send, first_line) = std::sync::mpsc::channel();
        // Only the first line is shown, so only it is waited for: a command that leaves a
        // background process holding its stdout does not hold the status line.
        std::thread::spawn(move || {
            let mut line = Vec::new();
            let _ = io::BufReader::new(stdout.take(64 * 1024)).read_until(b'\n', &mut line);
            let _ = send.send(line);
        });
        Some(Foreign { child, first_line })
    }

    /// The command's first line, or None when it does not answer in time.
    fn first_line(mut self) -> Option<String> {
        match self.first_line.recv_timeout(THEN_TIMEOUT) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let first = text.trim_end_matches(['\n', '\r']);
                (!first.trim().is_empty()).then(|| first.to_string())
            }
            Err(_) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                output::error_line(&format!(
                    "statusline: the --then command printed no line within {}s; showing autoctl's part only",
                    THEN_TIMEOUT.as_secs()
                ));
                None
            }
        }
    }
}

//! `autoctl hook stop|stop-failure`: the commands Claude Code runs as hooks
//! (`examples/claude/settings.json`). They read the event's JSON on stdin and answer on
//! stdout; see `crate::hook` for the loop they drive.

use std::io;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::error::Verdict;
use crate::fsx::{self, Bounded};
use crate::hook::input::STDIN_LIMIT;
use crate::hook::run::{self, Env, Outcome};
use crate::hook::transcript::Limits;
use crate::lock::System;
use crate::output;
use crate::pane::reset::Zone;

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Answer Claude Code's Stop event: continue the loop with its next prompt, or let the
    /// session stop
    ///
    /// Reads the Stop hook's JSON on stdin (session_id, transcript_path, cwd,
    /// hook_event_name, stop_hook_active, last_assistant_message). With no loop in the
    /// project (`autoctl loop init`), prints nothing: Claude stops. Otherwise the loop binds
    /// to the first session that stops and never blocks another one; it ends on the
    /// completion sentinel (a line of its own in the last message or the last turn of the
    /// transcript), the iteration limit, the token budget, idle turns, or the task routing
    /// to (stop), printing {"systemMessage": ...}; else it prints
    /// {"decision":"block","reason":<next prompt>,"systemMessage":"... iteration N of M"}.
    ///
    /// The project is --dir, else $CLAUDE_PROJECT_DIR, else the input's cwd.
    ///
    /// Exit status: 0 when it decided (also when it stands aside on bad loop state or a
    /// missing session_id, with a warning on stderr); 1 when it could not decide (stdin is not
    /// a hook input, the state cannot be written), with one line on stderr, and the stop is
    /// allowed. Never 2: Claude Code reads exit 2 from a Stop hook as "block and show stderr
    /// to the model".
    #[command(verbatim_doc_comment)]
    Stop(HookArgs),
    /// Record Claude Code's StopFailure event (a turn that ended on an API error)
    ///
    /// A rate_limit failure writes D/.autoctl/quota-wait.json {since, kind, reset_at?,
    /// reset_text?, detail?, session_id?} so supervisors treat the session as waiting for
    /// quota, not stalled (the next `hook stop` removes it); every failure is written to
    /// D/.autoctl/stop-failure.json {at, kind, detail?, session_id?}. Nothing is recorded in
    /// a project without D/.autoctl. Prints nothing (Claude Code ignores this event's
    /// output). Exit status: 0, or 1 with one line on stderr when stdin is not a hook input
    /// or the record cannot be written.
    #[command(verbatim_doc_comment)]
    StopFailure(HookArgs),
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input's cwd]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn run(command: HookCommand) -> Result<Verdict> {
    let host = match System::from_env() {
        Ok(host) => host,
        Err(err) => {
            output::error_line(&format!("{err:#}; allowing the stop"));
            return Ok(Verdict::No);
        }
    };
    let (stdin, args) = match &command {
        HookCommand::Stop(args) | HookCommand::StopFailure(args) => (read_stdin(), args),
    };
    let env = Env {
        host: &host,
        dir: args.dir.clone(),
        project_env: std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from),
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        pid: crate::lock::nearest_non_shell_ancestor(),
        limits: Limits::default(),
    };
    let outcome = match (stdin, &command) {
        (Err(problem), _) => Outcome {
            kind: "error".to_string(),
            error: Some(format!("{problem}; allowing the stop")),
            ..Outcome::default()
        },
        (Ok(bytes), HookCommand::Stop(_)) => run::stop(&bytes, &env),
        (Ok(bytes), HookCommand::StopFailure(_)) => {
            run::stop_failure(&bytes, &env, Zone::from_env())
        }
    };
    for warning in &outcome.warnings {
        output::warn(warning);
    }
    if let Some(error) = &outcome.error {
        output::error_line(error);
        return Ok(Verdict::No);
    }
    if let (HookCommand::Stop(_), Some(answer)) = (&command, outcome.hook_json()) {
        output::json_line(&answer)?;
    }
    Ok(Verdict::Yes)
}

fn read_stdin() -> std::result::Result<Vec<u8>, String> {
    match fsx::read_bounded_from(io::stdin().lock(), STDIN_LIMIT) {
        Ok(Bounded::Complete(bytes)) => Ok(bytes),
        Ok(Bounded::TooLarge { limit }) => Err(format!(
            "stdin is larger than {}: not a hook input",
            fsx::human_size(limit)
        )),
        Err(err) => Err(format!("cannot read stdin: {err}")),
    }
}

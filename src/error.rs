//! The boundary between commands and the process: the exit-code table and how an error becomes
//! one line on stderr.
//!
//! Commands return `anyhow::Result<Exit>`. Everything that goes wrong is exit 2 unless the
//! error chain carries a [`Conflict`] (exit 3) or [`Interrupted`] (exit 130); a broken pipe
//! anywhere in the chain is a clean exit, so `autoctl … | head -1` never complains.

use std::io;
use std::process::ExitCode;

/// The answer of a command that ran to completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success, or the answer is yes (exit 0).
    Yes,
    /// The answer is no: invalid document, findings, no stop requested, not ready (exit 1).
    No,
}

impl Exit {
    pub fn from_bool(yes: bool) -> Self {
        if yes { Exit::Yes } else { Exit::No }
    }
}

impl From<Exit> for ExitCode {
    fn from(verdict: Exit) -> Self {
        match verdict {
            Exit::Yes => ExitCode::SUCCESS,
            Exit::No => ExitCode::from(1),
        }
    }
}

/// Exit code for usage errors and operational failures.
pub const EXIT_FAILURE: u8 = 2;
/// Exit code for a conflict: another loop or lock owner holds what was asked for.
pub const EXIT_CONFLICT: u8 = 3;
/// Exit code for an interrupted command (SIGINT/SIGTERM).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The exit-code table, shared by `--help`, the man page and the README.
pub const EXIT_CODE_TABLE: &str = "\
Exit status:
  0    success, or the answer is yes (valid, stop requested, ready, no findings)
  1    the answer is no (invalid document, lint findings, no stop requested, not ready)
  2    usage error or operational failure (bad flag, unreadable file, tmux missing)
  3    conflict: a loop already runs for that session or task dir; a lock is held by another owner;
       the task module to create already exists
  130  interrupted";

/// Another owner holds what the command asked for (exit 3).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Conflict(pub String);

/// The command was interrupted by a signal before it finished (exit 130).
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// The failure was already reported on stderr (one line per failed item); exit 2 silently.
#[derive(Debug, thiserror::Error)]
#[error("already reported")]
pub struct Reported;

/// Turn an error into its exit code, printing it as one line on stderr.
pub fn report(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::SUCCESS;
    }
    let code = if err.chain().any(|cause| cause.is::<Conflict>()) {
        EXIT_CONFLICT
    } else if err.chain().any(|cause| cause.is::<Interrupted>()) {
        EXIT_INTERRUPTED
    } else {
        EXIT_FAILURE
    };
    if !err.chain().any(|cause| cause.is::<Reported>()) {
        crate::output::error_line(&format!("{err:#}"));
    }
    ExitCode::from(code)
}

pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_anywhere_in_the_chain_is_clean() {
        let err = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing");
        assert!(is_broken_pipe(&err));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }
}

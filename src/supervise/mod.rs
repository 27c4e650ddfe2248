//! Supervising loops.
//!
//! - The model: a run ([`run`]), what supervision needs from storage ([`store`], implemented
//!   in [`crate::registry`]), and what `run status` shows ([`report`]).
//! - The pure decisions: one tick of a run ([`tick`]) and the stall heartbeat with its kinds
//!   ([`stall`]).
//! - The one driver around them ([`driver`]): `run tick`, `run recover`, `run watch`'s
//!   per-run tick and `stall check` capture, decide, type the answer first and carry out the
//!   effects the same way; `run watch`'s event loop ([`watch`]).
//! - The rules of `run start`, `run stop` and `run continue` ([`control`]).
//! - The edges: what a heartbeat reads from the task directory ([`inputs`]) and the one path
//!   that types into an agent's pane ([`typing`]).
//! - The agent's state from its typed channels (hooks and status line), cross-checked
//!   against the screen ([`channels`]).
//!
//! # Glossary (one word per concept in this module)
//! - **observation**: what a tick read ([`tick::Observation`]); the stall core's slice of it is
//!   a [`stall::Sample`], the wait core's a [`wait::WaitObs`].
//! - **decision**: the one word a tick's event says ([`tick::Decision`]). `progress` means
//!   nothing to report; `continue` is the silent continue, the continuation typed to an
//!   idle agent (a stall recovery), as `stall check` says `action: continue`; `compact` is
//!   the `/compact` typed at an idle prompt past the context threshold (it answers no
//!   prompt, so it is not `answer`).
//! - **outcome**: what a tick plans ([`tick::Outcome`]: the next row, the answer, the
//!   effects, the event). How a headless step ended is a [`stream::StepEnd`]; how an
//!   app-server turn ended, a [`crate::appserver::turn::TurnEnd`].
//! - **diagnosis**: the stall core's answer ([`stall::Diagnosis`]: a [`stall::Condition`] and
//!   a [`stall::Response`]).
//! - **ruling**: the wait core's answer ([`wait::Ruling`]: an [`wait::Act`], whether the
//!   timeout clock pauses, and why). *Verdict* is the policy's alone
//!   ([`crate::policy::Verdict`]).
//! - **wait**: a screen or record the wait core waits on; it always has an end and a maximum
//!   ([`wait::OpenWait`]). Only the wait core opens, ends and pauses the timeout clock for
//!   it ([`wait::rule`]); the paused clock is [`stall::StallState::clock_paused_since`].
//! - **recovery** vs **answer**: what a carried-out step spends ([`stall::Spend`]): a
//!   continuation, a restart or an Esc spends the recovery budget; answering a prompt the
//!   policy proved harmless spends the answer budget.
//! - **resume**: the resume text typed after a wait ended. The one **Esc** of a wedged stream
//!   spends a recovery, not a resume: its tick event says `decision: esc`, as `stall check`
//!   says `action: esc`.
//! - **heartbeat**: the stall heartbeat alone, a tick's periodic look at a run for stalls and
//!   limits ([`stall::heartbeat`], due every `--heartbeat`; the run's
//!   `last_heartbeat_at`). Two other things the project calls a heartbeat keep that word on
//!   disk and in print but are named apart here: a lock's **renewal**
//!   ([`crate::lock::LockRecord::renewed_at`], written `heartbeat_at`), and `run watch`'s
//!   **sweep**, every run ticked in one batch each `--heartbeat` (the watcher's `sweep_at`).
//! - **channels** (the module [`channels`]): the agent's hook and status-line records (its
//!   *typed* channels, as DESIGN calls them), not keys typed into a pane (that is
//!   [`typing`]).

pub mod agent_start;
pub mod channels;
pub mod control;
pub mod driver;
pub mod governor;
pub mod inputs;
pub mod launch;
pub mod notify;
pub mod outbox;
pub mod report;
pub mod run;
pub mod stall;
pub mod store;
pub mod stream;
pub mod tick;
pub mod typing;
pub mod wait;
pub mod watch;

use std::path::PathBuf;

use anyhow::{Result, bail};

/// autoctl's state directory: `AUTOCTL_STATE_DIR`, else `$XDG_STATE_HOME/autoctl`, else
/// `~/.local/state/autoctl`.
///
/// A relative `XDG_STATE_HOME` is ignored (the XDG base directory specification calls it
/// invalid), and a relative `HOME` is refused: the state would land under whatever directory
/// the command happened to run in — a cron job's, a hook's — and the next command, run
/// elsewhere, would not find it. Hooks (after [`ignore_relative_home`]) must never fail and
/// must record where the supervisor reads: they ignore a relative (or missing) `HOME` and take
/// the user's home directory from the user database, as a shell does for `~` without `HOME`.
pub fn state_dir() -> Result<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("AUTOCTL_STATE_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = non_empty("XDG_STATE_HOME").map(PathBuf::from)
        && dir.is_absolute()
    {
        return Ok(dir.join("autoctl"));
    }
    let hook = IGNORE_RELATIVE_HOME.load(std::sync::atomic::Ordering::Relaxed);
    match non_empty("HOME").map(PathBuf::from) {
        Some(home) if home.is_absolute() => return Ok(home.join(".local/state/autoctl")),
        Some(home) if !hook => bail!(
            "HOME is a relative path ({}): autoctl's state would be written under the current directory; set HOME to an absolute path, or AUTOCTL_STATE_DIR",
            crate::output::printable(&home.to_string_lossy())
        ),
        _ => {}
    }
    if hook && let Some(home) = user_database_home() {
        return Ok(home.join(".local/state/autoctl"));
    }
    bail!("no state directory: set AUTOCTL_STATE_DIR or HOME")
}

static IGNORE_RELATIVE_HOME: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// From now on [`state_dir`] ignores a relative or missing `HOME` and uses the home directory
/// the user database gives this process's user (issue 23: a hook records nothing when it
/// fails, so it must not fail on an environment the person did not choose for it).
pub fn ignore_relative_home() {
    IGNORE_RELATIVE_HOME.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The home directory of this process's user in `/etc/passwd` (absolute, or none). A debug
/// build reads `AUTOCTL_TEST_PASSWD` instead when it is set, so a test need not write under
/// the real home of the user running it.
fn user_database_home() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to the process's (effective) user.
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    #[cfg(debug_assertions)]
    let test = std::env::var_os("AUTOCTL_TEST_PASSWD").filter(|v| !v.is_empty());
    #[cfg(not(debug_assertions))]
    let test: Option<std::ffi::OsString> = None;
    let path = test.map_or_else(|| PathBuf::from("/etc/passwd"), PathBuf::from);
    let text = std::fs::read_to_string(path).ok()?;
    passwd_home(&text, uid)
}

/// The home field of `uid`'s line in a passwd file (`name:x:uid:gid:gecos:home:shell`), when
/// it is absolute.
fn passwd_home(text: &str, uid: u32) -> Option<PathBuf> {
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.len() >= 7 && fields[2].parse() == Ok(uid))
            .then(|| PathBuf::from(fields[5]))
            .filter(|home| home.is_absolute())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_of_a_uid_comes_from_its_passwd_line() {
        let text = "root:x:0:0:root:/root:/bin/bash\n# comment\nbad:x:7\nrel:x:8:8::home:/bin/sh\ndev:x:1000:1000:Dev,,,:/home/dev:/bin/bash\n";
        assert_eq!(passwd_home(text, 0), Some(PathBuf::from("/root")));
        assert_eq!(passwd_home(text, 1000), Some(PathBuf::from("/home/dev")));
        assert_eq!(passwd_home(text, 7), None);
        assert_eq!(passwd_home(text, 8), None, "a relative home is no home");
        assert_eq!(passwd_home(text, 9), None);
    }
}
